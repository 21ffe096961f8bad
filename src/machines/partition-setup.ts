/**
 * What the names in the partition chart (partition-machine.ts) mean: its invoked services (left
 * unprovided here: worker-services.ts binds them to the ports, tests `provide` their own), its
 * delays, guards and actions. No I/O and no clock: a guard or action that reads a service's
 * answer or an event's fields gets it as typed params from the chart.
 */
import { assign, fromPromise, sendParent, setup } from 'xstate';
import { operationBudgetMs, retryWaitMs, storeAttemptsMax } from './limits.js';
import {
  budgetExhaustedDetail,
  exhaustedDetails,
  failedEnd,
  fencedDetails,
  foreignEpochDetails,
  frontierBeyondEndDetail,
  outcomeUnresolvedDetail,
  type PartitionEnd,
  protocolViolationDetails,
  type ReleaseReason,
  retiredEnd,
  revisionLostDetail,
  rolledBackDetail,
  type StoreOperation,
  sourceUnobservableDetail,
  unexpectedFrontierDetails,
} from './partition-ends.js';
import type {
  LastOutcome,
  PartitionContext,
  PartitionEvent,
  PartitionInput,
  PartitionReport,
} from './partition-types.js';
import {
  outcomeMayHaveCommitted,
  type PartitionBounds,
  type PartitionRow,
  type ProcessOutcome,
  type ProcessRequest,
  type SourceObservation,
  type SourceRecord,
} from './ports.js';
import type { AnswerParams, FailureParams, ObservationParams, RowParams } from './service-params.js';

/** The params the chart hands over from an event's fields (a service's answer: service-params.ts). */
export type BatchParams = { records: readonly SourceRecord[]; bounds: PartitionBounds };
export type ReleaseParams = { reason: ReleaseReason };

function notProvided(name: string): never {
  throw new Error(`the ${name} service was not provided`);
}

function lastOffset(records: readonly SourceRecord[]): number {
  const last = records[records.length - 1];
  if (last === undefined) throw new Error('a decision needs at least one record');
  return last.offset;
}

/** A batch is ahead when its offsets ascend strictly from at least the frontier. */
function batchIsAhead(records: readonly SourceRecord[], partition: number, frontier: number): boolean {
  let floor = frontier;
  for (const r of records) {
    if (r.partition !== partition || r.offset < floor) return false;
    floor = r.offset + 1;
  }
  return records.length > 0;
}

function withinBounds(offset: number, bounds: PartitionBounds): boolean {
  return offset >= bounds.retainedStart && offset <= bounds.readCommittedEnd;
}

function boundsOf(observation: SourceObservation, partition: number): PartitionBounds | undefined {
  return observation.valid ? observation.bounds.find((b) => b.partition === partition) : undefined;
}

/** The frontier of an acknowledged answer; the chart asks only after `acknowledgedAtLastPlusOne`. */
function acknowledgedFrontier(answer: ProcessOutcome): number {
  if (answer.kind !== 'acknowledged') throw new Error(`advanced on a ${answer.kind} answer`);
  return answer.frontier;
}

function ended(end: PartitionEnd): { end: PartitionEnd } {
  return { end };
}

// The guards the chart also needs joined with `released` or `attemptsRemain`: xstate's `and()`
// does not type a guard's dynamic params, so each pair is a named guard of its own.
type GuardArgs = { context: PartitionContext };

function released({ context }: GuardArgs): boolean {
  return context.release !== null;
}

function attemptsRemain({ context }: GuardArgs): boolean {
  return context.attempts < storeAttemptsMax;
}

function acknowledgedAtLastPlusOne({ context }: GuardArgs, { answer }: AnswerParams): boolean {
  return answer.kind === 'acknowledged' && answer.frontier === lastOffset(context.batch) + 1;
}

// The recovery table of docs/design.md#unknown-outcomes, one guard per row (`observedForeignEpoch` is the third).
function observedOwnEpoch({ context }: GuardArgs, { row }: RowParams): boolean {
  return row.epoch === context.token?.epoch && row.elsewhere !== true;
}

function observedCommitted(args: GuardArgs, params: RowParams): boolean {
  return observedOwnEpoch(args, params) && params.row.frontier === lastOffset(args.context.batch) + 1;
}

function observedNotCommitted(args: GuardArgs, params: RowParams): boolean {
  return observedOwnEpoch(args, params) && params.row.frontier === args.context.expectedFrontier;
}

/**
 * A row that shows the database went back in time (partition-ends.ts `rolledBackDetail`): an
 * epoch below the token's, or the token's own epoch and claim with a frontier below the one
 * this owner holds (the claimed one while seeking, the expected one while recovering).
 */
function rowWentBack({ context }: GuardArgs, { row }: RowParams): boolean {
  const epoch = context.token?.epoch;
  if (epoch === undefined) return false;
  if (row.epoch < epoch) return true;
  const frontier = context.expectedFrontier ?? context.frontier;
  return observedOwnEpoch({ context }, { row }) && frontier !== null && row.frontier < frontier;
}

/** The same of a commit's answer: fenced by a lower epoch, or its own claim's frontier below the expected one. */
function answerWentBack({ context }: GuardArgs, { answer }: AnswerParams): boolean {
  const epoch = context.token?.epoch;
  if (answer.kind === 'fenced') return epoch !== undefined && answer.epoch < epoch;
  return (
    answer.kind === 'unexpected_frontier' &&
    context.expectedFrontier !== null &&
    answer.frontier < context.expectedFrontier
  );
}

/** What a row or answer holds that is below this owner's, for the rolled-back end's detail. */
function heldBelow(context: PartitionContext, held: PartitionRow | ProcessOutcome): string {
  const epoch = context.token?.epoch;
  if ('epoch' in held && epoch !== undefined && held.epoch < epoch) {
    return `PostgreSQL holds epoch ${held.epoch} of partition ${context.partition}, below this claim's ${epoch}`;
  }
  const frontier = context.expectedFrontier ?? context.frontier;
  const durable = 'frontier' in held ? held.frontier : null;
  return `PostgreSQL holds frontier ${durable} of partition ${context.partition} under this claim, below the ${frontier} it acknowledged`;
}

export const partitionSetup = setup({
  types: {
    context: {} as PartitionContext,
    events: {} as PartitionEvent,
    input: {} as PartitionInput,
    output: {} as PartitionEnd | null,
  },
  actors: {
    claim: fromPromise<PartitionRow, { partition: number }>(async () => notProvided('claim')),
    observe: fromPromise<PartitionRow, { partition: number }>(async () => notProvided('observe')),
    process: fromPromise<ProcessOutcome, ProcessRequest>(async () => notProvided('process')),
    observeSource: fromPromise<SourceObservation, { partitions: readonly number[] }>(async () =>
      notProvided('observeSource'),
    ),
  },
  delays: {
    operationBudget: operationBudgetMs,
    retryWait: ({ context }) => retryWaitMs(context.attempts),
  },
  guards: {
    attemptsRemain,
    released,
    mayHaveCommitted: (_, { error }: FailureParams) => outcomeMayHaveCommitted(error),
    // Compatible claim, part 1: the epoch must be one this claim installed, above any epoch
    // seen after an unknown claim (docs/design.md#unknown-outcomes: never adopt an observed epoch).
    claimedForeignEpoch: ({ context }, { row }: RowParams) => row.epoch <= context.epochFloor,
    // Compatible claim, part 2: the frontier lies within the broker's retained range. Outside it
    // the source itself is invalid (docs/design.md#source-validation: fatal), not just this ownership.
    claimedFrontierOutOfBounds: ({ context }, { row }: RowParams) => !withinBounds(row.frontier, context.bounds),
    observedForeignEpoch: (args, params: RowParams) => !observedOwnEpoch(args, params),
    observedFrontierMoved: ({ context }, { row }: RowParams) => row.frontier !== context.frontier,
    sourceInvalid: (_, { observation }: ObservationParams) => !observation.valid,
    sourceBoundsExcludeFrontier: ({ context }, { observation }: ObservationParams) => {
      const bounds = boundsOf(observation, context.partition);
      return bounds === undefined || context.frontier === null || !withinBounds(context.frontier, bounds);
    },
    batchNotAhead: ({ context }, { records }: BatchParams) =>
      !batchIsAhead(records, context.partition, context.frontier ?? 0),
    batchBoundsExcludeFrontier: ({ context }, { bounds }: BatchParams) =>
      context.frontier === null || !withinBounds(context.frontier, bounds),
    acknowledgedAtLastPlusOne,
    acknowledgedAndReleased: (args, params: AnswerParams) => acknowledgedAtLastPlusOne(args, params) && released(args),
    acknowledgedElsewhere: (_, { answer }: AnswerParams) => answer.kind === 'acknowledged',
    fenced: (_, { answer }: AnswerParams) => answer.kind === 'fenced',
    rowWentBack,
    answerWentBack,
    revisionLost: (_, { answer }: AnswerParams) => answer.kind === 'revision_lost',
    observedCommitted,
    observedCommittedAndReleased: (args, params: RowParams) => observedCommitted(args, params) && released(args),
    observedNotCommitted,
    observedNotCommittedAndReleased: (args, params: RowParams) => observedNotCommitted(args, params) && released(args),
    observedNotCommittedAndAttemptsRemain: (args, params: RowParams) =>
      observedNotCommitted(args, params) && attemptsRemain(args),
  },
  actions: {
    // The notifications are named so a test can run this machine without a parent.
    reportPositioned: sendParent(
      ({ context }): PartitionReport => ({
        type: 'PARTITION_POSITIONED',
        partition: context.partition,
        offset: context.frontier ?? 0,
      }),
    ),
    reportSettled: sendParent(
      ({ context }): PartitionReport => ({
        type: 'PARTITION_SETTLED',
        partition: context.partition,
        frontier: context.frontier ?? 0,
      }),
    ),
    reportEnded: sendParent(({ context }): PartitionReport => {
      if (context.end === null) throw new Error('a final state without an end');
      return { type: 'PARTITION_ENDED', partition: context.partition, end: context.end };
    }),
    beginOperation: assign((_, { operation }: { operation: StoreOperation }) => ({ operation, attempts: 0 })),
    countAttempt: assign({ attempts: ({ context }) => context.attempts + 1 }),
    noteRelease: assign((_, { reason }: ReleaseParams) => ({ release: reason })),
    raiseEpochFloor: assign(({ context }, { row }: RowParams) => ({
      epochFloor: Math.max(context.epochFloor, row.epoch),
    })),
    installToken: assign(({ context }, { row }: RowParams) => ({
      token: {
        namespace: context.namespace,
        partition: context.partition,
        epoch: row.epoch,
        generation: context.generation,
      },
      frontier: row.frontier,
    })),
    saveSourceBounds: assign(({ context }, { observation }: ObservationParams) => ({
      bounds: boundsOf(observation, context.partition) ?? context.bounds,
    })),
    beginDecision: assign(({ context }, { records, bounds }: BatchParams) => ({
      batch: records,
      bounds,
      expectedFrontier: context.frontier,
      operation: 'decide' as const,
      attempts: 0,
    })),
    // The only two places the local position moves: an acknowledged commit, or an unknown
    // outcome that a fresh observation resolved as committed.
    advanceToAcknowledged: assign((_, { answer }: AnswerParams) => ({
      frontier: acknowledgedFrontier(answer),
      lastOutcome: 'acknowledged' as const,
    })),
    advanceToObserved: assign((_, { row }: RowParams) => ({
      frontier: row.frontier,
      lastOutcome: 'committed_after_unknown' as const,
    })),
    endDecision: assign({ batch: [], expectedFrontier: null, operation: null, attempts: 0 }),
    setOutcome: assign((_, { outcome }: { outcome: LastOutcome }) => ({ lastOutcome: outcome })),
    retireOnRelease: assign(({ context, event }) => {
      const reason = event.type === 'RELEASE' ? event.reason : (context.release ?? 'stopped');
      return { release: reason, end: retiredEnd(reason, `assignment ${reason}`) };
    }),
    retireForeignEpoch: assign((_, { seen }: { seen: keyof typeof foreignEpochDetails }) =>
      ended(retiredEnd('foreign_epoch', foreignEpochDetails[seen])),
    ),
    retireFenced: assign((_, { seen }: { seen: keyof typeof fencedDetails }) =>
      ended(retiredEnd('fenced', fencedDetails[seen])),
    ),
    retireUnexpectedFrontier: assign((_, { seen }: { seen: keyof typeof unexpectedFrontierDetails }) =>
      ended(retiredEnd('unexpected_frontier', unexpectedFrontierDetails[seen])),
    ),
    failBudgetExhausted: assign(({ context }) =>
      ended(failedEnd('budget_exhausted', budgetExhaustedDetail(context.operation))),
    ),
    failRetriesExhausted: assign((_, { after }: { after: keyof typeof exhaustedDetails }) =>
      ended(failedEnd('retries_exhausted', exhaustedDetails[after])),
    ),
    failSourceInvalid: assign((_, { observation }: ObservationParams) =>
      ended(
        failedEnd(
          'source_invalid',
          observation.valid ? frontierBeyondEndDetail('saved') : `${observation.reason}: ${observation.detail}`,
        ),
      ),
    ),
    failFrontierBeyondEnd: assign((_, { frontier }: { frontier: 'claimed' | 'saved' }) =>
      ended(failedEnd('source_invalid', frontierBeyondEndDetail(frontier))),
    ),
    failSourceUnobservable: assign(() => ended(failedEnd('source_unobservable', sourceUnobservableDetail))),
    failProtocolViolation: assign((_, { violation }: { violation: keyof typeof protocolViolationDetails }) =>
      ended(failedEnd('protocol_violation', protocolViolationDetails[violation])),
    ),
    failOutcomeUnresolved: assign(() => ended(failedEnd('outcome_unresolved', outcomeUnresolvedDetail))),
    // Not another owner's doing (a fence would retire): the group rides and claims afresh.
    failRowWentBack: assign(({ context }, { row, seen }: RowParams & { seen: 'claim' | 'observe' | 'recovery' }) => {
      const what =
        seen === 'claim'
          ? `the claim of partition ${context.partition} returned epoch ${row.epoch}, not above the ${context.epochFloor} read after an unknown claim`
          : heldBelow(context, row);
      return ended(failedEnd('rolled_back', rolledBackDetail(seen, what)));
    }),
    failAnswerWentBack: assign(({ context }, { answer }: AnswerParams) =>
      ended(failedEnd('rolled_back', rolledBackDetail('process', heldBelow(context, answer)))),
    ),
    failRevisionLost: assign(({ context }, { answer }: AnswerParams) => {
      const { held, known } = answer.kind === 'revision_lost' ? answer : { held: 0, known: 0 };
      return ended(failedEnd('revision_lost', revisionLostDetail(context.namespace, held, known)));
    }),
  },
});
