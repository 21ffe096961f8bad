/**
 * How a partition actor's ownership ends (docs/design.md#partition-lifecycle, #unknown-outcomes):
 * `retired` gives the partition up and the process goes on; `failed` stops the whole process with
 * exit 1. Each end carries a reason and a one-line detail; the details that name a limit are built
 * from limits.ts.
 */
import { operationBudgetMs, secondsText, storeAttemptsMax } from './limits.js';

/** What a revocation, a lost assignment or a shutdown asks of the partition; `suspended`: the
 * group rides through a transient outage and will claim the partition afresh. */
export type ReleaseReason = 'revoked' | 'lost' | 'stopped' | 'suspended';

export type RetireReason = ReleaseReason | 'fenced' | 'foreign_epoch' | 'unexpected_frontier';

export type FailReason =
  | 'retries_exhausted'
  | 'budget_exhausted'
  | 'outcome_unresolved'
  | 'source_invalid'
  | 'source_unobservable'
  | 'protocol_violation'
  | 'rolled_back'
  | 'revision_lost';

export type PartitionEnd =
  | { status: 'retired'; reason: RetireReason; detail: string }
  | { status: 'failed'; reason: FailReason; detail: string };

/** The store operation a shared budget covers: a claim, a seek, or one decision. */
export type StoreOperation = 'claim' | 'seek' | 'decide';

export function retiredEnd(reason: RetireReason, detail: string): PartitionEnd {
  return { status: 'retired', reason, detail };
}

export function failedEnd(reason: FailReason, detail: string): PartitionEnd {
  return { status: 'failed', reason, detail };
}

/** Another owner's epoch, by the answer that showed it. */
export const foreignEpochDetails = {
  observe: 'another owner claimed the partition',
} as const;

/** A fence, by the answer that showed it: the decision's own, or the recovery read after an unknown outcome. */
export const fencedDetails = {
  process: 'another owner holds a newer epoch',
  recovery: 'another owner claimed during an unknown outcome',
} as const;

/** A durable frontier other than the one this owner expects, by the answer that showed it. */
export const unexpectedFrontierDetails = {
  observe: 'the frontier moved under this epoch',
  process: 'the durable frontier differs',
  recovery: 'the frontier is neither expected nor committed',
} as const;

/**
 * PostgreSQL holds less than this owner claimed or committed: an epoch below its own, or its
 * own epoch and claim with a frontier below the one it committed. Epochs and frontiers only
 * grow on one timeline, so the database went back in time (an asynchronous failover that lost
 * commits, a restored backup). Not another owner's doing: the group claims afresh (a ride).
 */
export function rolledBackDetail(seen: 'claim' | 'observe' | 'process' | 'recovery', what: string): string {
  return `the database went back in time: ${what} (seen by the ${seen === 'recovery' ? 'recovery read' : seen}); claiming afresh`;
}

/**
 * The database holds an older configuration revision than one this worker decided under: a
 * config-revise was lost with it. Deciding again under the older configuration would publish
 * versions other than those already on the output topic, so the process stops (exit 1).
 */
export function revisionLostDetail(namespace: string, held: number, known: number): string {
  return `the database holds configuration revision ${held} of namespace ${namespace}, below the revision ${known} this worker decided under: it went back in time past a config-revise, and what was decided under that revision cannot be decided again identically (docs/operations.md, "When the database goes back in time")`;
}

const times = `${storeAttemptsMax} times`;

/** The last answer of an operation whose `storeAttemptsMax` attempts ran out. */
export const exhaustedDetails = {
  claimFailed: `claim failed ${times}`,
  claimOutcomeUnknown: `claim outcome unknown ${times}`,
  claimUnresolved: `claim unresolved after ${storeAttemptsMax} attempts`,
  observeFailed: `observe failed ${times}`,
  processFailed: `process failed ${times}`,
  processNotCommitted: `process did not commit in ${storeAttemptsMax} attempts`,
} as const;

const budgetedWork: Record<StoreOperation, string> = { claim: 'claim', seek: 'seeking', decide: 'the decision' };

export function budgetExhaustedDetail(operation: StoreOperation | null): string {
  const work = operation === null ? 'the operation' : budgetedWork[operation];
  return `${work} exceeded the ${secondsText(operationBudgetMs)} budget`;
}

/** A decision's records that the group should never have sent. */
export const protocolViolationDetails = {
  batchNotAhead: 'a batch behind the frontier or out of order',
  acknowledgedElsewhere: 'an acknowledged frontier other than last offset + 1',
} as const;

/**
 * The frontier outside the broker's retained range: the source itself is invalid
 * (docs/design.md#source-validation).
 */
export function frontierBeyondEndDetail(frontier: 'claimed' | 'saved'): string {
  return `frontier_beyond_end: the ${frontier === 'claimed' ? 'claimed ' : ''}frontier lies outside the retained range`;
}

export const sourceUnobservableDetail = 'the source could not be observed before the seek';

export const outcomeUnresolvedDetail = 'the outcome of process stays unknown: observe failed';
