/**
 * The group actor: owns the consumer's lifecycle and supervises one partition actor per
 * assigned partition (docs/design.md#consumer, #partition-lifecycle). This file is the chart; what
 * its names mean (services, delays, guards, actions) is in group-setup.ts, and how it hands a
 * service's answer to a guard or an action in service-params.ts.
 *
 *   starting → running.polling ⇄ validatingBatch → deciding → polling
 *   (the next poll and its source observation run while the last batch of a poll is being
 *   committed: deciding → polling as soon as nothing is pending, and a batch is dispatched only
 *   once the one in flight settled)
 *   running.polling ─PARTITIONS_ASSIGNED→ assigning (validate source → claim + seek → assign with offsets)
 *   running.* ─PARTITIONS_REVOKED→ revoking (releasing → unassigning)
 *   running.* ─a transient failure, or another database server→ riding (releasing, probing ⇄
 *     waiting → assigning afresh)
 *   any ─STOP, a fatal failure or an outage past its budget→ draining (releasing → unassigning
 *     → closing) → stopped | failed
 *
 * Rebalances follow the eager protocol (`range` assignment, docs/design.md#consumer): a revocation is
 * always of the whole assignment, and an assignment only follows a completed revocation.
 */
import { and, type ErrorActorEvent, not } from 'xstate';
import { errorMessage } from '../kernel/error-message.js';
import {
  groupSetup,
  type OutageParams,
  partitionFailureOf,
  type ReleaseParams,
  rebalanceBudgetFailure,
} from './group-setup.js';
import type { GroupEvent, PartitionEndedEvent } from './group-types.js';
import { defaultBatchSize, defaultOutageBudgetMs, ridesWithoutDecisionMax } from './limits.js';
import { failure, observation, records } from './service-params.js';

export { partitionActorId } from './group-setup.js';
export type {
  GroupCommand,
  GroupContext,
  GroupEvent,
  GroupFailure,
  GroupFailureReason,
  GroupInput,
  GroupOutput,
  Outage,
  PartitionEntry,
  PartitionPhase,
} from './group-types.js';

/**
 * What a settled batch does wherever the group meets it (deciding, or polling and validating the
 * next poll meanwhile): the partition's frontier moves, nothing is in flight, and a decision that
 * committed proves both dependencies answer, so an outage, if any, is over.
 */
const settledActions = ['recordSettled', 'clearOutage', 'resetRides'] as const;

export const groupMachine = groupSetup.createMachine({
  id: 'group',
  context: ({ input }) => ({
    namespace: input.namespace,
    batchSize: input.batchSize ?? defaultBatchSize,
    generation: 0,
    assignment: [],
    partitions: [],
    bounds: [],
    polled: [],
    pending: [],
    inFlight: null,
    failure: null,
    stopReason: null,
    outageBudgetMs: input.outageBudgetMs ?? defaultOutageBudgetMs,
    outage: null,
    rides: 0,
    ridesMax: input.ridesMax ?? ridesWithoutDecisionMax,
    probes: 0,
  }),
  output: ({ context }) => ({ exitCode: context.failure === null ? 0 : 1, failure: context.failure }),
  initial: 'starting',
  states: {
    starting: {
      description: 'Joins the consumer group (subscribe); rebalances arrive later, from inside a poll.',
      on: { STOP: { target: 'draining', actions: 'recordStop' } },
      invoke: {
        id: 'connect',
        src: 'connect',
        onDone: { target: 'running' },
        onError: { target: 'draining', actions: { type: 'recordConsumerFailure', params: failure } },
      },
    },
    running: {
      description: 'Member of the group: polls, decides, and follows rebalances and outages.',
      on: {
        STOP: { target: 'draining', actions: 'recordStop' },
        PARTITIONS_REVOKED: { target: '.revoking' },
        // With a serial consume → decide → consume loop, an assignment is served inside poll()
        // (docs/design.md#library-facts). Anywhere else it would break the eager protocol: fail visibly.
        PARTITIONS_ASSIGNED: {
          target: 'draining',
          actions: { type: 'recordRebalanceViolation', params: { violation: 'assignedOutsidePoll' } },
        },
        PARTITION_ENDED: [
          {
            guard: 'endedTransient',
            target: '.riding',
            actions: ['recordEnded', { type: 'noteOutage', params: endedOutage }],
          },
          { guard: 'endedFailed', target: 'draining', actions: ['recordEnded', 'recordPartitionFailure'] },
          { actions: 'recordEnded' },
        ],
        OUTAGE_EXPIRED: { actions: 'markOverdue' },
        OUTAGE_QUIET: { actions: 'clearOutage' },
        // The database may have gone back in time: a partition with nothing to decide would
        // otherwise never meet the lower frontier, and its lost records would stay undecided.
        // With nothing claimed (a revocation answered, the next assignment not come yet) the
        // next assignment claims afresh anyway, and a ride would claim the revoked partitions.
        DATABASE_CHANGED: [
          { guard: 'nothingAssigned' },
          { target: '.riding', actions: { type: 'noteOutage', params: databaseChanged } },
        ],
      },
      initial: 'polling',
      states: {
        polling: {
          description: 'A poll of at most --batch-size records; rebalance callbacks are served inside it.',
          on: {
            // The last batch of the previous poll may still be committing (see `deciding`).
            PARTITION_SETTLED: { actions: settledActions },
            PARTITIONS_ASSIGNED: [
              { guard: 'nothingAssigned', target: 'assigning' },
              {
                target: '#group.draining',
                actions: { type: 'recordRebalanceViolation', params: { violation: 'assignedBeforeRevoked' } },
              },
            ],
          },
          // A poll interrupted by a rebalance or a stop is dropped (its signal fires): the next
          // positions come from PostgreSQL, so no fetched record is lost.
          invoke: {
            id: 'poll',
            src: 'poll',
            input: ({ context }) => ({ maxRecords: context.batchSize }),
            onDone: [
              // An empty poll decides nothing and needs no observation (docs/design.md#source-validation).
              { guard: { type: 'pollEmpty', params: records }, target: 'polling', reenter: true },
              { target: 'validatingBatch', actions: { type: 'savePolled', params: records } },
            ],
            onError: { target: '#group.draining', actions: { type: 'recordConsumerFailure', params: failure } },
          },
        },
        validatingBatch: {
          description:
            'the source is observed after every non-empty poll, before any of its COMMITs, so buffered records cannot bridge a topic recreation.',
          on: { PARTITION_SETTLED: { actions: settledActions } },
          invoke: {
            id: 'observeSource',
            src: 'observeSource',
            input: ({ context }) => ({
              partitions: context.partitions.filter((e) => e.phase === 'consuming').map((e) => e.partition),
            }),
            onDone: [
              {
                guard: { type: 'sourceInvalid', params: observation },
                target: '#group.draining',
                actions: { type: 'recordSourceInvalid', params: observation },
              },
              { target: 'deciding', actions: [{ type: 'saveBounds', params: observation }, 'routeBatch'] },
            ],
            onError: { target: '#group.running.riding', actions: { type: 'noteOutage', params: unobservable } },
          },
        },
        // Once the last batch of a poll is in flight, the next poll and its source observation
        // run while it commits (docs/design.md#source-validation only needs the observation of a batch's own poll to
        // pass before its COMMIT is sent): at batch size 1 they were half of each record's cycle.
        deciding: {
          description: 'Hands each batch of the poll to its partition actor, one in flight at a time, in poll order.',
          entry: 'dispatchNext',
          always: { guard: 'nothingPending', target: 'polling' },
          on: {
            // Only the in-flight partition got a batch, so only it can settle.
            PARTITION_SETTLED: { target: 'deciding', reenter: true, actions: settledActions },
            // A fence retires only its partition: the remaining batches go on. (A failed end
            // falls through to `running`, which drains the whole process.)
            PARTITION_ENDED: {
              guard: and(['endedInFlight', not('endedFailed')]),
              target: 'deciding',
              reenter: true,
              actions: 'recordEnded',
            },
          },
        },
        assigning: {
          description:
            'An assignment inside the rebalance callback: validate the source, claim and seek every partition, assign with explicit offsets.',
          entry: 'beginGeneration',
          // Callback work shares the operation budget, below the one-minute rebalance timeout.
          after: {
            operationBudget: {
              target: '#group.running.riding',
              actions: { type: 'noteOutage', params: rebalanceOverBudget },
            },
          },
          initial: 'validatingSource',
          states: {
            validatingSource: {
              description: 'validate the source before assignment.',
              invoke: {
                id: 'observeSource',
                src: 'observeSource',
                input: ({ context }) => ({ partitions: context.assignment }),
                onDone: [
                  {
                    guard: { type: 'sourceInvalid', params: observation },
                    target: '#group.draining',
                    actions: { type: 'recordSourceInvalid', params: observation },
                  },
                  { target: 'claiming', actions: [{ type: 'saveBounds', params: observation }, 'spawnPartitions'] },
                ],
                onError: {
                  target: '#group.running.riding',
                  actions: { type: 'noteOutage', params: unobservable },
                },
              },
            },
            claiming: {
              description: 'One partition actor per partition claims and seeks; retired ones stay out.',
              always: { guard: 'assignmentSettled', target: 'applying' },
              on: { PARTITION_POSITIONED: { actions: 'recordPositioned' } },
            },
            // docs/design.md#kafka-consumer: assign with explicit offsets inside the rebalance callback, not
            // seek (which fails until the partition is fetching).
            applying: {
              description: "Assigns the consumer at each positioned partition's frontier (an explicit offset).",
              invoke: {
                id: 'assign',
                src: 'assign',
                input: ({ context }) => ({
                  positions: context.partitions
                    .filter((e) => e.phase === 'positioned')
                    .map((e) => ({ partition: e.partition, offset: e.offset ?? 0 })),
                }),
                // Claims committed and the source observed: both dependencies answer, the outage is over.
                onDone: { target: '#group.running.polling', actions: ['confirmPositions', 'clearOutage'] },
                onError: { target: '#group.draining', actions: { type: 'recordConsumerFailure', params: failure } },
              },
            },
          },
        },
        revoking: {
          description:
            'Revoke or loss: every partition is released, the in-flight decision resolves first, then the consumer is unassigned.',
          entry: { type: 'releasePartitions', params: revocation },
          on: {
            // A second revocation (or a loss) while revoking is answered by the same unassign.
            PARTITIONS_REVOKED: {},
            // The partitions go anyway, and the next assignment claims them afresh.
            DATABASE_CHANGED: {},
            // The partitions go anyway; whoever claims them next meets the outage, if it lasts.
            PARTITION_ENDED: { guard: 'endedTransient', actions: 'recordEnded' },
          },
          initial: 'releasing',
          // releasing → unassigning, as in draining: the broker sees the rebalance wait.
          states: releaseThenUnassign({ unassigned: '#group.running.polling', unassignFailed: '#group.draining' }),
        },
        // docs/design.md#outages: every partition leaves processing (an unresolved
        // outcome stays with the store: the next claim re-observes it), the group waits for the
        // database and the broker to answer, then claims its assignment afresh. No poll meanwhile:
        // the outage budget plus one operation stays below max.poll.interval.ms.
        riding: {
          description:
            'A transient outage: partitions leave processing; once the database and broker answer, the assignment is claimed afresh.',
          entry: [{ type: 'releasePartitions', params: { reason: 'suspended' } }, 'resetProbes', 'countRide'],
          on: {
            OUTAGE_EXPIRED: { target: '#group.draining', actions: 'failOutage' },
            // Only released partitions end here, and their ends belong to the outage.
            PARTITION_ENDED: { actions: 'recordEnded' },
            // Riding already ends in fresh claims, made on the database that answers then.
            DATABASE_CHANGED: {},
          },
          initial: 'releasing',
          states: {
            releasing: {
              description:
                'Waits until every partition actor ended; a spent outage budget, or too many rides without a decision, drains instead.',
              always: [
                { guard: 'outageSpent', target: '#group.draining', actions: 'failOutage' },
                { guard: 'allPartitionsEnded', target: 'probing' },
              ],
            },
            probing: {
              description: 'Asks both dependencies: the source observation and the row of each partition.',
              invoke: {
                id: 'probe',
                src: 'probe',
                input: ({ context }) => ({ partitions: context.assignment }),
                onDone: [
                  {
                    guard: { type: 'sourceInvalid', params: observation },
                    target: '#group.draining',
                    actions: { type: 'recordSourceInvalid', params: observation },
                  },
                  { target: '#group.running.assigning' },
                ],
                onError: { target: 'waiting', actions: 'countProbe' },
              },
            },
            waiting: {
              description: 'A cancellable wait between probes, growing with each failed one.',
              after: { probeWait: { target: 'probing' } },
            },
          },
        },
      },
    },
    draining: {
      description:
        'Shutdown or a fatal failure: cancel the runner, wait for guarded work, release ownership, unassign, then close the client outside any callback (docs/design.md#group-supervision, #logs-and-exit).',
      entry: { type: 'releasePartitions', params: { reason: 'stopped' } },
      on: {
        PARTITION_ENDED: [
          { guard: 'endedFailed', actions: ['recordEnded', 'recordPartitionFailure'] },
          { actions: 'recordEnded' },
        ],
      },
      initial: 'releasing',
      states: {
        // releasing → unassigning, as in revoking; a failed unassign still closes.
        ...releaseThenUnassign({ unassigned: 'closing', unassignFailed: 'closing' }),
        closing: {
          description: 'Leaves the group and closes the client, once.',
          invoke: {
            id: 'close',
            src: 'close',
            onDone: [{ guard: 'hasFailure', target: '#group.failed' }, { target: '#group.stopped' }],
            onError: { target: '#group.failed', actions: { type: 'recordConsumerFailure', params: failure } },
          },
        },
      },
    },
    stopped: { description: 'A clean stop: the process exits 0.', type: 'final' },
    failed: { description: 'A fatal failure, named in the output: the process exits 1.', type: 'final' },
  },
});

export type GroupMachine = typeof groupMachine;

/**
 * The sub-states revoking and draining share (docs/design.md#partition-lifecycle): the broker sees the rebalance
 * wait, so the consumer is unassigned only after every partition actor ended, the in-flight
 * decision's actor last. A failed unassign is recorded as the consumer's failure.
 */
function releaseThenUnassign(next: { unassigned: string; unassignFailed: string }) {
  return {
    releasing: groupSetup.createStateConfig({
      description: 'Waits until every released partition actor ended (the in-flight decision resolves first).',
      always: { guard: 'allPartitionsEnded', target: 'unassigning' },
    }),
    unassigning: groupSetup.createStateConfig({
      description: 'Clears the assignment of the consumer: this answers the rebalance callback.',
      invoke: {
        id: 'unassign',
        src: 'unassign',
        onDone: { target: next.unassigned },
        onError: { target: next.unassignFailed, actions: { type: 'recordConsumerFailure', params: failure } },
      },
    }),
  };
}

// What the chart hands its guards and actions from an event's fields, as typed params (function
// declarations, so the chart can come first; a service's answer: service-params.ts).

function endedOutage({ event }: { event: PartitionEndedEvent }): OutageParams {
  return { failure: partitionFailureOf(event) };
}

function unobservable({ event }: { event: ErrorActorEvent }): OutageParams {
  return { failure: { reason: 'source_unobservable', partition: null, detail: errorMessage(event.error) } };
}

function databaseChanged({ event }: { event: GroupEvent }): OutageParams {
  const detail = event.type === 'DATABASE_CHANGED' ? event.detail : 'another database server answers';
  return { failure: { reason: 'database_changed', partition: null, detail } };
}

function rebalanceOverBudget(): OutageParams {
  return { failure: rebalanceBudgetFailure };
}

/** Revoking is entered on PARTITIONS_REVOKED only: a lost assignment releases as `lost`. */
function revocation({ event }: { event: GroupEvent }): ReleaseParams {
  return { reason: event.type === 'PARTITIONS_REVOKED' && event.lost ? 'lost' : 'revoked' };
}
