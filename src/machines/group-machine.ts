/**
 * The group actor: owns the consumer's lifecycle and supervises one partition actor per
 * assigned partition (worker.md §3, §4). No I/O here: the consumer and the source observer
 * are invoked services supplied through `setup({ actors })`.
 *
 *   starting → running.polling ⇄ validatingBatch → deciding → polling
 *   (the next poll and its source observation run while the last batch of a poll is being
 *   committed: deciding → polling as soon as nothing is pending, and a batch is dispatched only
 *   once the one in flight settled)
 *   running.polling ─PARTITIONS_ASSIGNED→ assigning (validate source → claim + seek → assign with offsets)
 *   running.* ─PARTITIONS_REVOKED→ revoking (release, wait for the in-flight decision → unassign)
 *   running.* ─a transient failure→ riding (release, probe ⇄ wait → assigning afresh)
 *   any ─STOP, a fatal failure or an outage past its budget→ draining (release, wait, unassign,
 *     close) → stopped | failed
 *
 * Rebalances follow the eager protocol (`range` assignment, worker.md §3): a revocation is
 * always of the whole assignment, and an assignment only follows a completed revocation.
 */
import { and, assign, enqueueActions, fromPromise, not, setup } from 'xstate';
import { defaultBatchSize, defaultOutageBudgetMs, operationBudgetMs, probeWaitMs } from './limits.js';
import { type PartitionEnd, type PartitionReport, partitionMachine, type ReleaseReason } from './partition-machine.js';
import type {
  PartitionBounds,
  PartitionPosition,
  SourceInvalidReason,
  SourceObservation,
  SourceRecord,
} from './ports.js';

/**
 * What a settled batch does wherever the group meets it (deciding, or polling and validating the
 * next poll meanwhile): the partition's frontier moves, nothing is in flight, and a decision that
 * committed proves both dependencies answer, so an outage, if any, is over.
 */
const settledActions = ['recordSettled', 'clearOutage'] as const;

/** The fixed actor id of a partition's actor: its done event is `xstate.done.actor.partition-<n>`. */
export function partitionActorId(partition: number): string {
  return `partition-${partition}`;
}

/** The group's view of one partition actor of the current assignment generation. */
export type PartitionPhase = 'claiming' | 'positioned' | 'consuming' | 'retired' | 'failed';

export interface PartitionEntry {
  partition: number;
  phase: PartitionPhase;
  /** The explicit offset the consumer is assigned at (the claimed frontier). */
  offset: number | null;
  /** The latest settled frontier, for the dashboard. */
  frontier: number | null;
  released: boolean;
  end: PartitionEnd | null;
}

export type GroupFailureReason =
  | 'partition_failed'
  | 'source_invalid'
  | 'source_unobservable'
  | 'consumer_failed'
  | 'rebalance_protocol'
  | 'rebalance_budget';

export interface GroupFailure {
  reason: GroupFailureReason;
  partition: number | null;
  detail: string;
}

export interface GroupInput {
  namespace: string;
  /** `--batch-size`: records per poll (and so at most per decision). */
  batchSize?: number;
  /** `--outage-budget-s` in ms; 0 ends the process at the first transient failure. */
  outageBudgetMs?: number;
}

/** A transient outage being ridden through (worker.md §6 "Transient outages"). */
export interface Outage {
  /** What began it: the process's failure if the budget runs out. */
  failure: GroupFailure;
  /** The budget ran out while the group was processing again: a relapse now is fatal. */
  overdue: boolean;
}

export interface GroupContext {
  namespace: string;
  batchSize: number;
  /** Counts assignments; part of every ownership token of the generation. */
  generation: number;
  /** The partitions of the latest assignment, ascending. */
  assignment: readonly number[];
  /** One entry per partition actor spawned for the current generation, ascending. */
  partitions: PartitionEntry[];
  /** The bounds of the latest valid source observation. */
  bounds: PartitionBounds[];
  /** The records of the last non-empty poll, until the source observation passes. */
  polled: readonly SourceRecord[];
  /** Per-partition batches of the last poll still to decide, in order. */
  pending: { partition: number; records: readonly SourceRecord[] }[];
  /** The partition whose decision is in flight: processing is serial across partitions. */
  inFlight: number | null;
  failure: GroupFailure | null;
  stopReason: string | null;
  outageBudgetMs: number;
  /** Set by the first transient failure, cleared by the next settled decision. */
  outage: Outage | null;
  /** Failed probes since the group began riding: the next wait grows with them. */
  probes: number;
}

export interface GroupOutput {
  /** 0 after a clean stop, 1 after a failure (worker.md §7). */
  exitCode: 0 | 1;
  failure: GroupFailure | null;
}

/** The events a consumer adapter and a signal handler send. */
export type GroupCommand =
  /** librdkafka's ERR__ASSIGN_PARTITIONS: the callback waits until the group calls `assign`. */
  | { type: 'PARTITIONS_ASSIGNED'; partitions: readonly number[] }
  /** ERR__REVOKE_PARTITIONS (lost = assignmentLost()): the callback waits until `unassign`. */
  | { type: 'PARTITIONS_REVOKED'; lost: boolean }
  /** SIGINT / SIGTERM. */
  | { type: 'STOP'; reason: string };

/** The outage clock, raised by the group itself (a delayed event, not a child actor). */
type OutageClock = { type: 'OUTAGE_EXPIRED' } | { type: 'OUTAGE_QUIET' };

export type GroupEvent = GroupCommand | PartitionReport | OutageClock;

/** The id of the one pending outage-clock event, so a settled decision can cancel it. */
const outageTimer = 'outage-budget';

/** Partition ends a dependency outage causes: the next claim, not a restart, recovers them. */
const transientEnds: ReadonlySet<string> = new Set([
  'retries_exhausted',
  'budget_exhausted',
  'outcome_unresolved',
  'source_unobservable',
]);

function outputOf<T>(event: unknown): T {
  return (event as { output: T }).output;
}

function errorText(event: unknown): string {
  const error = (event as { error?: unknown }).error;
  return error instanceof Error ? error.message : String(error);
}

/** The failure an outage began with: a partition's end, or the group's own failed service. */
function outageFailureOf(event: GroupEvent, params: { reason?: GroupFailureReason; detail?: string }): GroupFailure {
  if (event.type === 'PARTITION_ENDED') {
    return {
      reason: 'partition_failed',
      partition: event.partition,
      detail: `${event.end.reason}: ${event.end.detail}`,
    };
  }
  return { reason: params.reason ?? 'source_unobservable', partition: null, detail: params.detail ?? errorText(event) };
}

/** Retired because another owner claimed the partition, or moved its frontier. */
function takenByAnother(entry: PartitionEntry | undefined): boolean {
  const reason = entry?.end?.status === 'retired' ? entry.end.reason : null;
  return reason === 'fenced' || reason === 'foreign_epoch' || reason === 'unexpected_frontier';
}

function isLive(entry: PartitionEntry): boolean {
  return entry.phase !== 'retired' && entry.phase !== 'failed';
}

function updateEntry(entries: PartitionEntry[], partition: number, change: Partial<PartitionEntry>): PartitionEntry[] {
  return entries.map((e) => (e.partition === partition ? { ...e, ...change } : e));
}

function describeInvalid(observation: SourceObservation): { reason: SourceInvalidReason; detail: string } {
  return observation.valid
    ? { reason: 'frontier_beyond_end', detail: 'no invalidity reported' }
    : { reason: observation.reason, detail: observation.detail };
}

export const groupMachine = setup({
  types: {
    context: {} as GroupContext,
    events: {} as GroupEvent,
    input: {} as GroupInput,
    output: {} as GroupOutput,
  },
  actors: {
    partition: partitionMachine,
    connect: fromPromise<void, void>(async () => {
      throw new Error('the connect service was not provided');
    }),
    poll: fromPromise<readonly SourceRecord[], { maxRecords: number }>(async () => {
      throw new Error('the poll service was not provided');
    }),
    observeSource: fromPromise<SourceObservation, { partitions: readonly number[] }>(async () => {
      throw new Error('the observeSource service was not provided');
    }),
    /** While riding: the source observation and each partition's row, i.e. both dependencies answer. */
    probe: fromPromise<SourceObservation, { partitions: readonly number[] }>(async () => {
      throw new Error('the probe service was not provided');
    }),
    assign: fromPromise<void, { positions: readonly PartitionPosition[] }>(async () => {
      throw new Error('the assign service was not provided');
    }),
    unassign: fromPromise<void, void>(async () => {
      throw new Error('the unassign service was not provided');
    }),
    close: fromPromise<void, void>(async () => {
      throw new Error('the close service was not provided');
    }),
  },
  delays: {
    operationBudget: operationBudgetMs,
    probeWait: ({ context }) => probeWaitMs(context.probes),
  },
  guards: {
    pollEmpty: ({ event }) => outputOf<readonly SourceRecord[]>(event).length === 0,
    sourceInvalid: ({ event }) => !outputOf<SourceObservation>(event).valid,
    nothingAssigned: ({ context }) => !context.partitions.some(isLive),
    assignmentSettled: ({ context }) => !context.partitions.some((e) => e.phase === 'claiming'),
    allPartitionsEnded: ({ context }) => !context.partitions.some(isLive),
    nothingPending: ({ context }) => context.pending.length === 0,
    endedFailed: ({ event }) => event.type === 'PARTITION_ENDED' && event.end.status === 'failed',
    endedTransient: ({ event }) =>
      event.type === 'PARTITION_ENDED' && event.end.status === 'failed' && transientEnds.has(event.end.reason),
    outageSpent: ({ context }) => context.outageBudgetMs === 0 || context.outage?.overdue === true,
    endedInFlight: ({ context, event }) => event.type === 'PARTITION_ENDED' && event.partition === context.inFlight,
    hasFailure: ({ context }) => context.failure !== null,
  },
  actions: {
    // After riding, the same assignment is claimed afresh (a new generation, new tokens), but
    // for partitions another owner took meanwhile: a fence means our assignment may be stale,
    // and only the group's next assignment, not this process, may claim them back.
    beginGeneration: assign(({ context, event }) => ({
      generation: context.generation + 1,
      assignment:
        event.type === 'PARTITIONS_ASSIGNED'
          ? [...event.partitions].sort((a, b) => a - b)
          : context.assignment.filter((p) => !takenByAnother(context.partitions.find((e) => e.partition === p))),
      partitions: [],
      pending: [],
      inFlight: null,
    })),
    saveBounds: assign({
      bounds: ({ event }) => [...((outputOf<SourceObservation>(event) as { bounds?: PartitionBounds[] }).bounds ?? [])],
    }),
    // One actor per partition. Ids are computed here because a spawn's id must be a fixed string
    // (library-notes.md); ASSIGNED is queued in the child's mailbox until it starts.
    spawnPartitions: enqueueActions(({ context, enqueue }) => {
      // An entry exists exactly while its actor may be alive: created with the spawn.
      enqueue.assign({
        partitions: context.assignment.map(
          (partition): PartitionEntry => ({
            partition,
            phase: 'claiming',
            offset: null,
            frontier: null,
            released: false,
            end: null,
          }),
        ),
      });
      for (const partition of context.assignment) {
        const bounds = context.bounds.find((b) => b.partition === partition) ?? {
          partition,
          retainedStart: 0,
          readCommittedEnd: -1,
        };
        const id = partitionActorId(partition);
        enqueue.spawnChild('partition', {
          id,
          input: { namespace: context.namespace, partition, generation: context.generation, bounds },
        });
        enqueue.sendTo(id, { type: 'ASSIGNED' });
      }
    }),
    recordPositioned: assign({
      partitions: ({ context, event }) =>
        event.type === 'PARTITION_POSITIONED'
          ? updateEntry(context.partitions, event.partition, {
              phase: 'positioned',
              offset: event.offset,
              frontier: event.offset,
            })
          : context.partitions,
    }),
    // The consumer now fetches from the explicit offsets: the positioned actors may process.
    confirmPositions: enqueueActions(({ context, enqueue }) => {
      for (const entry of context.partitions) {
        if (entry.phase !== 'positioned') continue;
        enqueue.sendTo(partitionActorId(entry.partition), { type: 'POSITIONED' });
      }
      enqueue.assign({
        partitions: context.partitions.map((e) =>
          e.phase === 'positioned' ? { ...e, phase: 'consuming' as const } : e,
        ),
      });
    }),
    recordSettled: assign(({ context, event }) =>
      event.type === 'PARTITION_SETTLED'
        ? {
            partitions: updateEntry(context.partitions, event.partition, { frontier: event.frontier }),
            inFlight: context.inFlight === event.partition ? null : context.inFlight,
          }
        : {},
    ),
    // A partition actor in a final state is stopped at once, so `partitions` (phase ≠ retired
    // or failed) and the live children stay the same set: every sendTo targets an existing child.
    recordEnded: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'PARTITION_ENDED') return;
      enqueue.assign({
        partitions: updateEntry(context.partitions, event.partition, { phase: event.end.status, end: event.end }),
        inFlight: context.inFlight === event.partition ? null : context.inFlight,
      });
      enqueue.stopChild(partitionActorId(event.partition));
    }),
    recordPartitionFailure: assign({
      failure: ({ context, event }) =>
        context.failure ??
        (event.type === 'PARTITION_ENDED'
          ? {
              reason: 'partition_failed' as const,
              partition: event.partition,
              detail: `${event.end.reason}: ${event.end.detail}`,
            }
          : null),
    }),
    recordSourceInvalid: assign({
      failure: ({ context, event }) => {
        const { reason, detail } = describeInvalid(outputOf<SourceObservation>(event));
        return (
          context.failure ?? { reason: 'source_invalid' as const, partition: null, detail: `${reason}: ${detail}` }
        );
      },
    }),
    recordServiceFailure: assign({
      failure: ({ context, event }, params: { reason: GroupFailureReason }) =>
        context.failure ?? { reason: params.reason, partition: null, detail: errorText(event) },
    }),
    recordFailure: assign({
      failure: ({ context }, params: { reason: GroupFailureReason; detail: string }) =>
        context.failure ?? { reason: params.reason, partition: null, detail: params.detail },
    }),
    // The first transient failure starts the outage clock; later ones belong to the same outage.
    noteOutage: enqueueActions(
      ({ context, event, enqueue }, params: { reason?: GroupFailureReason; detail?: string }) => {
        if (context.outage !== null) return;
        enqueue.assign({ outage: { failure: outageFailureOf(event, params), overdue: false } });
        if (context.outageBudgetMs > 0) {
          enqueue.raise({ type: 'OUTAGE_EXPIRED' }, { id: outageTimer, delay: context.outageBudgetMs });
        }
      },
    ),
    // Expired while processing again: the next failure within one more budget is fatal.
    markOverdue: enqueueActions(({ context, enqueue }) => {
      if (context.outage === null) return;
      enqueue.assign({ outage: { ...context.outage, overdue: true } });
      enqueue.cancel(outageTimer); // a timer rescheduled under a pending id could not be cancelled
      enqueue.raise({ type: 'OUTAGE_QUIET' }, { id: outageTimer, delay: context.outageBudgetMs });
    }),
    clearOutage: enqueueActions(({ context, enqueue }) => {
      if (context.outage === null) return;
      enqueue.cancel(outageTimer);
      enqueue.assign({ outage: null });
    }),
    failOutage: assign({
      failure: ({ context }) => {
        const outage = context.outage;
        if (context.failure !== null || outage === null) return context.failure;
        const spent = context.outageBudgetMs > 0 ? `; outage budget of ${context.outageBudgetMs / 1000} s spent` : '';
        return { ...outage.failure, detail: `${outage.failure.detail}${spent}` };
      },
    }),
    resetProbes: assign({ probes: 0 }),
    countProbe: assign({ probes: ({ context }) => context.probes + 1 }),
    recordStop: assign({ stopReason: ({ event }) => (event.type === 'STOP' ? event.reason : 'stop') }),
    savePolled: assign({ polled: ({ event }) => outputOf<readonly SourceRecord[]>(event) }),
    // Group the poll's records per partition, keeping broker order within each partition.
    routeBatch: assign(({ context }) => {
      const byPartition = new Map<number, SourceRecord[]>();
      for (const record of context.polled) {
        const list = byPartition.get(record.partition) ?? [];
        list.push(record);
        byPartition.set(record.partition, list);
      }
      return {
        pending: [...byPartition].map(([partition, records]) => ({ partition, records })),
        polled: [],
      };
    }),
    // Hands the next batch to its partition actor. The consumer has already moved past these
    // records, and a batch may legitimately start after a gap (aborted data), so a consuming
    // partition's batch is never dropped. Only batches of partitions that ended since the poll
    // are: those are not owned here any more, and their next owner reads from PostgreSQL.
    dispatchNext: enqueueActions(({ context, enqueue }) => {
      // Serial processing (worker.md §4): the next batch waits for the one in flight.
      if (context.inFlight !== null) return;
      const pending = [...context.pending];
      for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
        const partition = next.partition;
        const entry = context.partitions.find((e) => e.partition === partition);
        if (entry?.phase !== 'consuming') continue;
        // An observation without this partition's bounds proves nothing: empty bounds make the
        // partition fail as source-invalid instead of deciding unchecked.
        const bounds = context.bounds.find((b) => b.partition === partition) ?? {
          partition,
          retainedStart: 0,
          readCommittedEnd: -1,
        };
        enqueue.assign({ pending, inFlight: partition });
        enqueue.sendTo(partitionActorId(partition), { type: 'BATCH', records: next.records, bounds });
        return;
      }
      enqueue.assign({ pending: [], inFlight: null });
    }),
    releasePartitions: enqueueActions(
      ({ context, event, enqueue }, params: { reason: ReleaseReason | 'from-event' }) => {
        const reason: ReleaseReason =
          params.reason !== 'from-event'
            ? params.reason
            : event.type === 'PARTITIONS_REVOKED' && event.lost
              ? 'lost'
              : 'revoked';
        for (const entry of context.partitions) {
          if (!isLive(entry) || entry.released) continue;
          enqueue.sendTo(partitionActorId(entry.partition), { type: 'RELEASE', reason });
        }
        enqueue.assign({
          partitions: context.partitions.map((e) => (isLive(e) ? { ...e, released: true } : e)),
          pending: [],
        });
      },
    ),
  },
}).createMachine({
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
    probes: 0,
  }),
  output: ({ context }) => ({ exitCode: context.failure === null ? 0 : 1, failure: context.failure }),
  initial: 'starting',
  states: {
    starting: {
      on: { STOP: { target: 'draining', actions: 'recordStop' } },
      invoke: {
        id: 'connect',
        src: 'connect',
        onDone: { target: 'running' },
        onError: {
          target: 'draining',
          actions: { type: 'recordServiceFailure', params: { reason: 'consumer_failed' } },
        },
      },
    },
    running: {
      on: {
        STOP: { target: 'draining', actions: 'recordStop' },
        PARTITIONS_REVOKED: { target: '.revoking' },
        // With a serial consume → decide → consume loop, an assignment is served inside poll()
        // (library-notes.md). Anywhere else it would break the eager protocol: fail visibly.
        PARTITIONS_ASSIGNED: {
          target: 'draining',
          actions: {
            type: 'recordFailure',
            params: { reason: 'rebalance_protocol', detail: 'an assignment arrived outside a poll' },
          },
        },
        PARTITION_ENDED: [
          { guard: 'endedTransient', target: '.riding', actions: ['recordEnded', { type: 'noteOutage', params: {} }] },
          { guard: 'endedFailed', target: 'draining', actions: ['recordEnded', 'recordPartitionFailure'] },
          { actions: 'recordEnded' },
        ],
        OUTAGE_EXPIRED: { actions: 'markOverdue' },
        OUTAGE_QUIET: { actions: 'clearOutage' },
      },
      initial: 'polling',
      states: {
        polling: {
          on: {
            // The last batch of the previous poll may still be committing (see `deciding`).
            PARTITION_SETTLED: { actions: settledActions },
            PARTITIONS_ASSIGNED: [
              { guard: 'nothingAssigned', target: 'assigning' },
              {
                target: '#group.draining',
                actions: {
                  type: 'recordFailure',
                  params: { reason: 'rebalance_protocol', detail: 'an assignment before the previous one was revoked' },
                },
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
              // An empty poll decides nothing and needs no observation (worker.md §2).
              { guard: 'pollEmpty', target: 'polling', reenter: true },
              { target: 'validatingBatch', actions: 'savePolled' },
            ],
            onError: {
              target: '#group.draining',
              actions: { type: 'recordServiceFailure', params: { reason: 'consumer_failed' } },
            },
          },
        },
        // After every non-empty poll, before any decision's COMMIT (worker.md §2): buffered
        // records cannot silently bridge a topic recreation.
        validatingBatch: {
          on: { PARTITION_SETTLED: { actions: settledActions } },
          invoke: {
            id: 'observeSource',
            src: 'observeSource',
            input: ({ context }) => ({
              partitions: context.partitions.filter((e) => e.phase === 'consuming').map((e) => e.partition),
            }),
            onDone: [
              { guard: 'sourceInvalid', target: '#group.draining', actions: 'recordSourceInvalid' },
              { target: 'deciding', actions: ['saveBounds', 'routeBatch'] },
            ],
            onError: {
              target: '#group.running.riding',
              actions: { type: 'noteOutage', params: { reason: 'source_unobservable' } },
            },
          },
        },
        // One batch in flight at a time, in poll order. Once the last batch of a poll is in
        // flight, the next poll and its source observation run while it commits (worker.md §2
        // only needs the observation of a batch's own poll to pass before its COMMIT is sent):
        // at batch size 1 they were half of each record's cycle.
        deciding: {
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
          entry: 'beginGeneration',
          // Callback work shares the 20 s budget, below the one-minute rebalance timeout.
          after: {
            operationBudget: {
              target: '#group.running.riding',
              actions: {
                type: 'noteOutage',
                params: { reason: 'rebalance_budget', detail: 'assignment exceeded 20 s' },
              },
            },
          },
          initial: 'validatingSource',
          states: {
            // worker.md §2: validate before assignment.
            validatingSource: {
              invoke: {
                id: 'observeSource',
                src: 'observeSource',
                input: ({ context }) => ({ partitions: context.assignment }),
                onDone: [
                  { guard: 'sourceInvalid', target: '#group.draining', actions: 'recordSourceInvalid' },
                  { target: 'claiming', actions: ['saveBounds', 'spawnPartitions'] },
                ],
                onError: {
                  target: '#group.running.riding',
                  actions: { type: 'noteOutage', params: { reason: 'source_unobservable' } },
                },
              },
            },
            claiming: {
              always: { guard: 'assignmentSettled', target: 'applying' },
              on: {
                PARTITION_POSITIONED: { actions: 'recordPositioned' },
              },
            },
            // library-notes.md: assign with explicit offsets inside the rebalance callback, not
            // seek (which fails until the partition is fetching). Retired partitions stay out.
            applying: {
              invoke: {
                id: 'assign',
                src: 'assign',
                input: ({ context }) => ({
                  positions: context.partitions
                    .filter((e) => e.phase === 'positioned')
                    .map((e) => ({ partition: e.partition, offset: e.offset ?? 0 })),
                }),
                onDone: { target: '#group.running.polling', actions: 'confirmPositions' },
                onError: {
                  target: '#group.draining',
                  actions: { type: 'recordServiceFailure', params: { reason: 'consumer_failed' } },
                },
              },
            },
          },
        },
        // The broker sees the rebalance wait: unassign only after every partition actor ended,
        // the in-flight decision's actor last (worker.md §4.5).
        revoking: {
          entry: { type: 'releasePartitions', params: { reason: 'from-event' } },
          on: {
            // A second revocation (or a loss) while revoking is answered by the same unassign.
            PARTITIONS_REVOKED: {},
            // The partitions go anyway; whoever claims them next meets the outage, if it lasts.
            PARTITION_ENDED: { guard: 'endedTransient', actions: 'recordEnded' },
          },
          initial: 'releasing',
          states: {
            releasing: {
              always: { guard: 'allPartitionsEnded', target: 'unassigning' },
            },
            unassigning: {
              invoke: {
                id: 'unassign',
                src: 'unassign',
                onDone: { target: '#group.running.polling' },
                onError: {
                  target: '#group.draining',
                  actions: { type: 'recordServiceFailure', params: { reason: 'consumer_failed' } },
                },
              },
            },
          },
        },
        // worker.md §6 "Transient outages": every partition leaves processing (an unresolved
        // outcome stays with the store: the next claim re-observes it), the group waits for the
        // database and the broker to answer, then claims its assignment afresh. No poll meanwhile:
        // the outage budget plus one operation stays below max.poll.interval.ms.
        riding: {
          entry: [{ type: 'releasePartitions', params: { reason: 'suspended' } }, 'resetProbes'],
          on: {
            OUTAGE_EXPIRED: { target: '#group.draining', actions: 'failOutage' },
            // Only released partitions end here, and their ends belong to the outage.
            PARTITION_ENDED: { actions: 'recordEnded' },
          },
          initial: 'releasing',
          states: {
            releasing: {
              always: [
                { guard: 'outageSpent', target: '#group.draining', actions: 'failOutage' },
                { guard: 'allPartitionsEnded', target: 'probing' },
              ],
            },
            probing: {
              invoke: {
                id: 'probe',
                src: 'probe',
                input: ({ context }) => ({ partitions: context.assignment }),
                onDone: [
                  { guard: 'sourceInvalid', target: '#group.draining', actions: 'recordSourceInvalid' },
                  { target: '#group.running.assigning' },
                ],
                onError: { target: 'waiting', actions: 'countProbe' },
              },
            },
            waiting: {
              after: { probeWait: { target: 'probing' } },
            },
          },
        },
      },
    },
    // Shutdown and fatal failures: cancel the runner (the poll is dropped, waits are cancelled),
    // wait for guarded work (the in-flight decision), invalidate ownership locally, then close
    // the client outside any callback (worker.md §4.5, §7).
    draining: {
      entry: { type: 'releasePartitions', params: { reason: 'stopped' } },
      on: {
        PARTITION_ENDED: [
          { guard: 'endedFailed', actions: ['recordEnded', 'recordPartitionFailure'] },
          { actions: 'recordEnded' },
        ],
      },
      initial: 'releasing',
      states: {
        releasing: {
          always: { guard: 'allPartitionsEnded', target: 'unassigning' },
        },
        unassigning: {
          invoke: {
            id: 'unassign',
            src: 'unassign',
            onDone: { target: 'closing' },
            onError: {
              target: 'closing',
              actions: { type: 'recordServiceFailure', params: { reason: 'consumer_failed' } },
            },
          },
        },
        closing: {
          invoke: {
            id: 'close',
            src: 'close',
            onDone: [{ guard: 'hasFailure', target: '#group.failed' }, { target: '#group.stopped' }],
            onError: {
              target: '#group.failed',
              actions: { type: 'recordServiceFailure', params: { reason: 'consumer_failed' } },
            },
          },
        },
      },
    },
    stopped: { type: 'final' },
    failed: { type: 'final' },
  },
});

export type GroupMachine = typeof groupMachine;
