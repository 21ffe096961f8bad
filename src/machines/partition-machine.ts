/**
 * The lifecycle of one assigned partition (worker.md §4, §6): one actor per unit of ownership,
 * spawned by the group actor. No I/O here: `claim`, `observe`, `process` and `observeSource`
 * are invoked services supplied through `setup({ actors })`; the retry waits and the shared
 * operation budget are xstate delays.
 *
 *   unassigned ─ASSIGNED→ claiming ─compatible→ seeking ─POSITIONED→ processing.idle
 *   processing.idle ─BATCH→ processing.deciding.committing ─acknowledged→ processing.idle
 *   committing ─unknown→ recovering ─committed→ idle | ─not committed→ waiting → committing
 *   fenced, foreign epoch, unexpected frontier, RELEASE (revoked, lost, stopped) → retired
 *   attempts or budget exhausted, outcome unresolved, source invalid → failed
 */
import { and, assign, fromPromise, sendParent, setup } from 'xstate';
import { operationBudgetMs, retryWaitMs, storeAttemptsMax } from './limits.js';
import {
  outcomeMayHaveCommitted,
  type PartitionBounds,
  type PartitionRow,
  type ProcessOutcome,
  type ProcessRequest,
  type SourceInvalidReason,
  type SourceObservation,
  type SourceRecord,
} from './ports.js';

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
  | 'protocol_violation';

export type PartitionEnd =
  | { status: 'retired'; reason: RetireReason; detail: string }
  | { status: 'failed'; reason: FailReason; detail: string };

/** (namespace, partition, epoch, assignment generation): saved by a compatible claim only. */
export interface OwnershipToken {
  namespace: string;
  partition: number;
  epoch: number;
  generation: number;
}

export type StoreOperation = 'claim' | 'seek' | 'decide';

export type LastOutcome =
  | 'acknowledged'
  | 'committed_after_unknown'
  | 'not_committed'
  | 'unknown'
  | 'failed_before_commit'
  | 'fenced'
  | 'unexpected_frontier';

export interface PartitionInput {
  namespace: string;
  partition: number;
  generation: number;
  /** The bounds the group validated just before this assignment. */
  bounds: PartitionBounds;
}

/** What the dashboard shows for a partition (worker.md §4, quality.md "Dashboard"). */
export interface PartitionContext {
  namespace: string;
  partition: number;
  generation: number;
  bounds: PartitionBounds;
  token: OwnershipToken | null;
  /** The frontier read by the compatible claim, then moved only by resolved commits. */
  frontier: number | null;
  /** The highest epoch observed after an unknown claim: never adopted, only to be exceeded. */
  epochFloor: number;
  /** The records of the decision in flight (empty between decisions). */
  batch: readonly SourceRecord[];
  expectedFrontier: number | null;
  operation: StoreOperation | null;
  /** Store attempts made in the current operation (at most `storeAttemptsMax`). */
  attempts: number;
  /** The shared deadline of the current operation, as a budget: the timer is an xstate delay. */
  budgetMs: number;
  release: ReleaseReason | null;
  lastOutcome: LastOutcome | null;
  end: PartitionEnd | null;
}

export type PartitionEvent =
  | { type: 'ASSIGNED' }
  /** The group assigned the consumer at this partition's frontier (explicit offset). */
  | { type: 'POSITIONED' }
  /** One decision's records, with the bounds of the post-poll source observation. */
  | { type: 'BATCH'; records: readonly SourceRecord[]; bounds: PartitionBounds }
  | { type: 'RELEASE'; reason: ReleaseReason };

/** What the partition tells its group (sent with `sendParent`). */
export type PartitionReport =
  | { type: 'PARTITION_POSITIONED'; partition: number; offset: number }
  | { type: 'PARTITION_SETTLED'; partition: number; frontier: number }
  | { type: 'PARTITION_ENDED'; partition: number; end: PartitionEnd };

function notProvided(name: string): never {
  throw new Error(`the ${name} service was not provided`);
}

/** Done and error events of invoked services are not in the machine's event union: read them here. */
function outputOf<T>(event: unknown): T {
  return (event as { output: T }).output;
}

function errorOf(event: unknown): unknown {
  return (event as { error?: unknown }).error;
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

export const partitionMachine = setup({
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
    attemptsRemain: ({ context }) => context.attempts < storeAttemptsMax,
    released: ({ context }) => context.release !== null,
    mayHaveCommitted: ({ event }) => outcomeMayHaveCommitted(errorOf(event)),
    // Compatible claim, part 1: the epoch must be one this claim installed, above any epoch
    // seen after an unknown claim (worker.md §6: never adopt an observed epoch).
    claimedForeignEpoch: ({ context, event }) => outputOf<PartitionRow>(event).epoch <= context.epochFloor,
    // Compatible claim, part 2: the frontier lies within the broker's retained range. Outside it
    // the source itself is invalid (worker.md §2: fatal), not just this ownership.
    claimedFrontierOutOfBounds: ({ context, event }) =>
      !withinBounds(outputOf<PartitionRow>(event).frontier, context.bounds),
    observedForeignEpoch: ({ context, event }) => outputOf<PartitionRow>(event).epoch !== context.token?.epoch,
    observedFrontierMoved: ({ context, event }) => outputOf<PartitionRow>(event).frontier !== context.frontier,
    sourceInvalid: ({ event }) => !outputOf<SourceObservation>(event).valid,
    sourceBoundsExcludeFrontier: ({ context, event }) => {
      const bounds = boundsOf(outputOf<SourceObservation>(event), context.partition);
      return bounds === undefined || context.frontier === null || !withinBounds(context.frontier, bounds);
    },
    batchNotAhead: ({ context, event }) =>
      !batchIsAhead((event as { records: readonly SourceRecord[] }).records, context.partition, context.frontier ?? 0),
    batchBoundsExcludeFrontier: ({ context, event }) =>
      context.frontier === null || !withinBounds(context.frontier, (event as { bounds: PartitionBounds }).bounds),
    acknowledgedAtLastPlusOne: ({ context, event }) => {
      const outcome = outputOf<ProcessOutcome>(event);
      return outcome.kind === 'acknowledged' && outcome.frontier === lastOffset(context.batch) + 1;
    },
    acknowledgedElsewhere: ({ event }) => outputOf<ProcessOutcome>(event).kind === 'acknowledged',
    fenced: ({ event }) => outputOf<ProcessOutcome>(event).kind === 'fenced',
    // The recovery table of worker.md §6, one guard per row.
    observedCommitted: ({ context, event }) => {
      const row = outputOf<PartitionRow>(event);
      return row.epoch === context.token?.epoch && row.frontier === lastOffset(context.batch) + 1;
    },
    observedNotCommitted: ({ context, event }) => {
      const row = outputOf<PartitionRow>(event);
      return row.epoch === context.token?.epoch && row.frontier === context.expectedFrontier;
    },
    observedOtherEpoch: ({ context, event }) => outputOf<PartitionRow>(event).epoch !== context.token?.epoch,
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
    beginOperation: assign((_, params: { operation: StoreOperation }) => ({
      operation: params.operation,
      attempts: 0,
    })),
    countAttempt: assign({ attempts: ({ context }) => context.attempts + 1 }),
    noteRelease: assign({ release: ({ event }) => (event as { reason: ReleaseReason }).reason }),
    raiseEpochFloor: assign({
      epochFloor: ({ context, event }) => Math.max(context.epochFloor, outputOf<PartitionRow>(event).epoch),
    }),
    installToken: assign(({ context, event }) => {
      const row = outputOf<PartitionRow>(event);
      return {
        token: {
          namespace: context.namespace,
          partition: context.partition,
          epoch: row.epoch,
          generation: context.generation,
        },
        frontier: row.frontier,
      };
    }),
    saveSourceBounds: assign({
      bounds: ({ context, event }) => boundsOf(outputOf<SourceObservation>(event), context.partition) ?? context.bounds,
    }),
    beginDecision: assign(({ context, event }) => {
      const batch = event as { records: readonly SourceRecord[]; bounds: PartitionBounds };
      return {
        batch: batch.records,
        bounds: batch.bounds,
        expectedFrontier: context.frontier,
        operation: 'decide' as const,
        attempts: 0,
      };
    }),
    // The only two places the local position moves: an acknowledged commit, or an unknown
    // outcome that a fresh observation resolved as committed.
    advanceToAcknowledged: assign(({ event }) => ({
      frontier: (outputOf<ProcessOutcome>(event) as { frontier: number }).frontier,
      lastOutcome: 'acknowledged' as const,
    })),
    advanceToObserved: assign(({ event }) => ({
      frontier: outputOf<PartitionRow>(event).frontier,
      lastOutcome: 'committed_after_unknown' as const,
    })),
    endDecision: assign({ batch: [], expectedFrontier: null, operation: null, attempts: 0 }),
    setOutcome: assign((_, params: { outcome: LastOutcome }) => ({ lastOutcome: params.outcome })),
    retire: assign((_, params: { reason: RetireReason; detail: string }) => ({
      end: { status: 'retired' as const, reason: params.reason, detail: params.detail },
    })),
    retireOnRelease: assign(({ context, event }) => {
      const reason = event.type === 'RELEASE' ? event.reason : (context.release ?? 'stopped');
      return { release: reason, end: { status: 'retired' as const, reason, detail: `assignment ${reason}` } };
    }),
    fail: assign((_, params: { reason: FailReason; detail: string }) => ({
      end: { status: 'failed' as const, reason: params.reason, detail: params.detail },
    })),
    failSourceInvalid: assign(({ event }) => {
      const observation = outputOf<SourceObservation>(event);
      const reason: SourceInvalidReason = observation.valid ? 'frontier_beyond_end' : observation.reason;
      const detail = observation.valid ? 'the frontier lies outside the retained range' : observation.detail;
      return { end: { status: 'failed' as const, reason: 'source_invalid' as const, detail: `${reason}: ${detail}` } };
    }),
  },
}).createMachine({
  id: 'partition',
  context: ({ input }) => ({
    namespace: input.namespace,
    partition: input.partition,
    generation: input.generation,
    bounds: input.bounds,
    token: null,
    frontier: null,
    epochFloor: 0,
    batch: [],
    expectedFrontier: null,
    operation: null,
    attempts: 0,
    budgetMs: operationBudgetMs,
    release: null,
    lastOutcome: null,
    end: null,
  }),
  initial: 'unassigned',
  output: ({ context }) => context.end,
  states: {
    unassigned: {
      on: {
        ASSIGNED: { target: 'claiming', actions: { type: 'beginOperation', params: { operation: 'claim' } } },
        RELEASE: { target: 'retired', actions: 'retireOnRelease' },
      },
    },
    claiming: {
      // Leaving `claiming` stops the claim service: a late claim result after a revocation is
      // dropped by xstate and never installs an epoch (worker.md §4: no install after invalidation).
      on: { RELEASE: { target: 'retired', actions: 'retireOnRelease' } },
      after: {
        operationBudget: {
          target: 'failed',
          actions: { type: 'fail', params: { reason: 'budget_exhausted', detail: 'claim exceeded the 20 s budget' } },
        },
      },
      initial: 'claim',
      states: {
        claim: {
          entry: 'countAttempt',
          invoke: {
            id: 'claim',
            src: 'claim',
            input: ({ context }) => ({ partition: context.partition }),
            onDone: [
              {
                guard: 'claimedForeignEpoch',
                target: '#partition.retired',
                actions: {
                  type: 'retire',
                  params: { reason: 'foreign_epoch', detail: 'the claim returned an epoch this claim did not install' },
                },
              },
              {
                guard: 'claimedFrontierOutOfBounds',
                target: '#partition.failed',
                actions: {
                  type: 'fail',
                  params: {
                    reason: 'source_invalid',
                    detail: 'frontier_beyond_end: the claimed frontier lies outside the retained range',
                  },
                },
              },
              {
                target: '#partition.seeking',
                actions: ['installToken', { type: 'beginOperation', params: { operation: 'seek' } }],
              },
            ],
            onError: [
              // An unknown claim may have installed an epoch: observe it, never adopt it.
              { guard: 'mayHaveCommitted', target: 'observeAfterUnknown' },
              { guard: 'attemptsRemain', target: 'wait' },
              {
                target: '#partition.failed',
                actions: { type: 'fail', params: { reason: 'retries_exhausted', detail: 'claim failed 3 times' } },
              },
            ],
          },
        },
        observeAfterUnknown: {
          invoke: {
            id: 'observe',
            src: 'observe',
            input: ({ context }) => ({ partition: context.partition }),
            onDone: [
              { guard: 'attemptsRemain', target: 'wait', actions: 'raiseEpochFloor' },
              {
                target: '#partition.failed',
                actions: [
                  'raiseEpochFloor',
                  { type: 'fail', params: { reason: 'retries_exhausted', detail: 'claim outcome unknown 3 times' } },
                ],
              },
            ],
            onError: [
              { guard: 'attemptsRemain', target: 'wait' },
              {
                target: '#partition.failed',
                actions: {
                  type: 'fail',
                  params: { reason: 'retries_exhausted', detail: 'claim unresolved after 3 attempts' },
                },
              },
            ],
          },
        },
        // A still-valid assignment claims afresh after the wait (it may consume another epoch).
        wait: { after: { retryWait: 'claim' } },
      },
    },
    seeking: {
      // Seeking never installs an epoch: it checks the token against a fresh observation.
      on: { RELEASE: { target: 'retired', actions: 'retireOnRelease' } },
      after: {
        operationBudget: {
          target: 'failed',
          actions: { type: 'fail', params: { reason: 'budget_exhausted', detail: 'seeking exceeded the 20 s budget' } },
        },
      },
      initial: 'observeStore',
      states: {
        observeStore: {
          entry: 'countAttempt',
          invoke: {
            id: 'observe',
            src: 'observe',
            input: ({ context }) => ({ partition: context.partition }),
            onDone: [
              {
                guard: 'observedForeignEpoch',
                target: '#partition.retired',
                actions: {
                  type: 'retire',
                  params: { reason: 'foreign_epoch', detail: 'another owner claimed the partition' },
                },
              },
              {
                guard: 'observedFrontierMoved',
                target: '#partition.retired',
                actions: {
                  type: 'retire',
                  params: { reason: 'unexpected_frontier', detail: 'the frontier moved under this epoch' },
                },
              },
              { target: 'observeSource' },
            ],
            onError: [
              { guard: 'attemptsRemain', target: 'wait' },
              {
                target: '#partition.failed',
                actions: { type: 'fail', params: { reason: 'retries_exhausted', detail: 'observe failed 3 times' } },
              },
            ],
          },
        },
        wait: { after: { retryWait: 'observeStore' } },
        // worker.md §2: validate the retained boundary before any external seek.
        observeSource: {
          invoke: {
            id: 'observeSource',
            src: 'observeSource',
            input: ({ context }) => ({ partitions: [context.partition] }),
            onDone: [
              { guard: 'sourceInvalid', target: '#partition.failed', actions: 'failSourceInvalid' },
              { guard: 'sourceBoundsExcludeFrontier', target: '#partition.failed', actions: 'failSourceInvalid' },
              { target: 'awaitingAssign', actions: 'saveSourceBounds' },
            ],
            onError: {
              target: '#partition.failed',
              actions: {
                type: 'fail',
                params: { reason: 'source_unobservable', detail: 'the source could not be observed before the seek' },
              },
            },
          },
        },
        // library-notes.md: the position is set by assigning with an explicit offset inside the
        // rebalance callback (`seek` fails before fetching starts): the group does that assign.
        awaitingAssign: {
          entry: 'reportPositioned',
          on: { POSITIONED: { target: '#partition.processing' } },
        },
      },
    },
    processing: {
      initial: 'idle',
      states: {
        idle: {
          on: {
            BATCH: [
              {
                guard: 'batchNotAhead',
                target: '#partition.failed',
                actions: {
                  type: 'fail',
                  params: { reason: 'protocol_violation', detail: 'a batch behind the frontier or out of order' },
                },
              },
              {
                guard: 'batchBoundsExcludeFrontier',
                target: '#partition.failed',
                actions: {
                  type: 'fail',
                  params: {
                    reason: 'source_invalid',
                    detail: 'frontier_beyond_end: the frontier lies outside the retained range',
                  },
                },
              },
              { target: 'deciding', actions: 'beginDecision' },
            ],
            RELEASE: { target: '#partition.retired', actions: 'retireOnRelease' },
          },
        },
        // "(committing)" in worker.md §4: one decision in flight, retries and recovery included.
        deciding: {
          // A revocation waits for the in-flight decision to resolve (worker.md §4.5).
          on: { RELEASE: { actions: 'noteRelease' } },
          after: {
            operationBudget: {
              target: '#partition.failed',
              actions: {
                type: 'fail',
                params: { reason: 'budget_exhausted', detail: 'the decision exceeded the 20 s budget' },
              },
            },
          },
          initial: 'committing',
          states: {
            committing: {
              entry: 'countAttempt',
              invoke: {
                id: 'process',
                src: 'process',
                input: ({ context }): ProcessRequest => ({
                  partition: context.partition,
                  records: context.batch,
                  epoch: context.token?.epoch ?? -1,
                  expectedFrontier: context.expectedFrontier ?? -1,
                }),
                onDone: [
                  {
                    guard: and(['acknowledgedAtLastPlusOne', 'released']),
                    target: '#partition.retired',
                    actions: ['advanceToAcknowledged', 'endDecision', 'retireOnRelease'],
                  },
                  {
                    guard: 'acknowledgedAtLastPlusOne',
                    target: '#partition.processing.idle',
                    actions: ['advanceToAcknowledged', 'endDecision', 'reportSettled'],
                  },
                  {
                    guard: 'acknowledgedElsewhere',
                    target: '#partition.failed',
                    actions: {
                      type: 'fail',
                      params: {
                        reason: 'protocol_violation',
                        detail: 'an acknowledged frontier other than last offset + 1',
                      },
                    },
                  },
                  {
                    guard: 'fenced',
                    target: '#partition.retired',
                    actions: [
                      { type: 'setOutcome', params: { outcome: 'fenced' } },
                      { type: 'retire', params: { reason: 'fenced', detail: 'another owner holds a newer epoch' } },
                    ],
                  },
                  {
                    target: '#partition.retired',
                    actions: [
                      { type: 'setOutcome', params: { outcome: 'unexpected_frontier' } },
                      {
                        type: 'retire',
                        params: { reason: 'unexpected_frontier', detail: 'the durable frontier differs' },
                      },
                    ],
                  },
                ],
                onError: [
                  {
                    guard: 'mayHaveCommitted',
                    target: 'recovering',
                    actions: { type: 'setOutcome', params: { outcome: 'unknown' } },
                  },
                  {
                    guard: 'released',
                    target: '#partition.retired',
                    actions: [
                      { type: 'setOutcome', params: { outcome: 'failed_before_commit' } },
                      'endDecision',
                      'retireOnRelease',
                    ],
                  },
                  {
                    guard: 'attemptsRemain',
                    target: 'waiting',
                    actions: { type: 'setOutcome', params: { outcome: 'failed_before_commit' } },
                  },
                  {
                    target: '#partition.failed',
                    actions: {
                      type: 'fail',
                      params: { reason: 'retries_exhausted', detail: 'process failed 3 times' },
                    },
                  },
                ],
              },
            },
            // "unknown-recovery": re-read epoch and frontier before anything else (worker.md §6).
            recovering: {
              invoke: {
                id: 'observe',
                src: 'observe',
                input: ({ context }) => ({ partition: context.partition }),
                onDone: [
                  {
                    guard: and(['observedCommitted', 'released']),
                    target: '#partition.retired',
                    actions: ['advanceToObserved', 'endDecision', 'retireOnRelease'],
                  },
                  {
                    guard: 'observedCommitted',
                    target: '#partition.processing.idle',
                    actions: ['advanceToObserved', 'endDecision', 'reportSettled'],
                  },
                  {
                    guard: and(['observedNotCommitted', 'released']),
                    target: '#partition.retired',
                    actions: [
                      { type: 'setOutcome', params: { outcome: 'not_committed' } },
                      'endDecision',
                      'retireOnRelease',
                    ],
                  },
                  {
                    guard: and(['observedNotCommitted', 'attemptsRemain']),
                    target: 'waiting',
                    actions: { type: 'setOutcome', params: { outcome: 'not_committed' } },
                  },
                  {
                    guard: 'observedNotCommitted',
                    target: '#partition.failed',
                    actions: {
                      type: 'fail',
                      params: { reason: 'retries_exhausted', detail: 'process did not commit in 3 attempts' },
                    },
                  },
                  {
                    guard: 'observedOtherEpoch',
                    target: '#partition.retired',
                    actions: {
                      type: 'retire',
                      params: { reason: 'fenced', detail: 'another owner claimed during an unknown outcome' },
                    },
                  },
                  {
                    target: '#partition.retired',
                    actions: {
                      type: 'retire',
                      params: {
                        reason: 'unexpected_frontier',
                        detail: 'the frontier is neither expected nor committed',
                      },
                    },
                  },
                ],
                onError: {
                  target: '#partition.failed',
                  actions: {
                    type: 'fail',
                    params: {
                      reason: 'outcome_unresolved',
                      detail: 'the outcome of process stays unknown: observe failed',
                    },
                  },
                },
              },
            },
            // A cancellable wait: nothing is in flight, so a release retires at once.
            waiting: {
              on: { RELEASE: { target: '#partition.retired', actions: ['endDecision', 'retireOnRelease'] } },
              after: { retryWait: 'committing' },
            },
          },
        },
      },
    },
    retired: { type: 'final', entry: 'reportEnded' },
    failed: { type: 'final', entry: 'reportEnded' },
  },
});

export type PartitionMachine = typeof partitionMachine;
