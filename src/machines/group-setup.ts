/**
 * What the names in the group chart (group-machine.ts) mean: its invoked services (the consumer
 * and the source observer, left unprovided here: worker-services.ts binds them to the ports),
 * the partition actor it spawns, its delays, guards and actions. No I/O and no clock: a guard
 * or action that reads a service's answer gets it as typed params from the chart.
 */
import { assign, enqueueActions, fromPromise, setup } from 'xstate';
import { errorMessage } from '../kernel/error-message.js';
import type {
  GroupContext,
  GroupEvent,
  GroupFailure,
  GroupInput,
  GroupOutput,
  Outage,
  PartitionEndedEvent,
  PartitionEntry,
} from './group-types.js';
import { operationBudgetMs, probeWaitMs, secondsText } from './limits.js';
import type { ReleaseReason } from './partition-ends.js';
import { partitionMachine } from './partition-machine.js';
import type { PartitionBounds, PartitionPosition, SourceObservation, SourceRecord } from './ports.js';
import type { FailureParams, ObservationParams, RecordsParams } from './service-params.js';

/** The params the chart hands over besides a service's answer (service-params.ts). */
export type OutageParams = { failure: GroupFailure };
export type ReleaseParams = { reason: ReleaseReason };

/** The fixed actor id of a partition's actor: its done event is `xstate.done.actor.partition-<n>`. */
export function partitionActorId(partition: number): string {
  return `partition-${partition}`;
}

/** The id of the one pending outage-clock event, so a settled decision can cancel it. */
const outageTimer = 'outage-budget';

/** Partition ends a dependency outage causes: the next claim, not a restart, recovers them. */
const transientEnds: ReadonlySet<string> = new Set([
  'retries_exhausted',
  'budget_exhausted',
  'outcome_unresolved',
  'source_unobservable',
  // The database went back in time (partition-ends.ts): what a restart would do, claim afresh.
  'rolled_back',
]);

/** An assignment the eager protocol rules out (docs/design.md#consumer): the group fails visibly. */
export const rebalanceViolationDetails = {
  assignedOutsidePoll: 'an assignment arrived outside a poll',
  assignedBeforeRevoked: 'an assignment before the previous one was revoked',
} as const;

export function partitionFailureOf(event: PartitionEndedEvent): GroupFailure {
  return { reason: 'partition_failed', partition: event.partition, detail: `${event.end.reason}: ${event.end.detail}` };
}

/** Callback work shares the operation budget, below the one-minute rebalance timeout. */
export const rebalanceBudgetFailure: GroupFailure = {
  reason: 'rebalance_budget',
  partition: null,
  detail: `assignment exceeded ${secondsText(operationBudgetMs)}`,
};

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

/** A partition's bounds from the latest observation. Without them the bounds are empty, so the
 * partition fails as source-invalid instead of deciding unchecked: an observation that lacks a
 * partition proves nothing about it. */
function boundsFor(context: GroupContext, partition: number): PartitionBounds {
  return context.bounds.find((b) => b.partition === partition) ?? { partition, retainedStart: 0, readCommittedEnd: -1 };
}

function newEntry(partition: number): PartitionEntry {
  return { partition, phase: 'claiming', offset: null, frontier: null, released: false, end: null };
}

function invalidDetail(observation: SourceObservation): string {
  return observation.valid
    ? 'frontier_beyond_end: no invalidity reported'
    : `${observation.reason}: ${observation.detail}`;
}

/** What ended the outage's tolerance, as the failure's detail goes on (nothing with budget 0: exit at once). */
function whySpent(context: GroupContext, outage: Outage): string {
  if (context.outageBudgetMs === 0) return '';
  if (context.rides >= context.ridesMax && !outage.overdue) {
    return `; ${context.rides} outages in a row without a committed decision`;
  }
  return `; outage budget of ${secondsText(context.outageBudgetMs)} spent`;
}

function notProvided(name: string): never {
  throw new Error(`the ${name} service was not provided`);
}

export const groupSetup = setup({
  types: {
    context: {} as GroupContext,
    events: {} as GroupEvent,
    input: {} as GroupInput,
    output: {} as GroupOutput,
  },
  actors: {
    partition: partitionMachine,
    connect: fromPromise<void, void>(async () => notProvided('connect')),
    poll: fromPromise<readonly SourceRecord[], { maxRecords: number }>(async () => notProvided('poll')),
    observeSource: fromPromise<SourceObservation, { partitions: readonly number[] }>(async () =>
      notProvided('observeSource'),
    ),
    /** While riding: the source observation and each partition's row, i.e. both dependencies answer. */
    probe: fromPromise<SourceObservation, { partitions: readonly number[] }>(async () => notProvided('probe')),
    assign: fromPromise<void, { positions: readonly PartitionPosition[] }>(async () => notProvided('assign')),
    unassign: fromPromise<void, void>(async () => notProvided('unassign')),
    close: fromPromise<void, void>(async () => notProvided('close')),
  },
  delays: {
    operationBudget: operationBudgetMs,
    probeWait: ({ context }) => probeWaitMs(context.probes),
  },
  guards: {
    pollEmpty: (_, { records }: RecordsParams) => records.length === 0,
    sourceInvalid: (_, { observation }: ObservationParams) => !observation.valid,
    nothingAssigned: ({ context }) => !context.partitions.some(isLive),
    assignmentSettled: ({ context }) => !context.partitions.some((e) => e.phase === 'claiming'),
    allPartitionsEnded: ({ context }) => !context.partitions.some(isLive),
    nothingPending: ({ context }) => context.pending.length === 0,
    endedFailed: ({ event }) => event.type === 'PARTITION_ENDED' && event.end.status === 'failed',
    endedTransient: ({ event }) =>
      event.type === 'PARTITION_ENDED' && event.end.status === 'failed' && transientEnds.has(event.end.reason),
    outageSpent: ({ context }) =>
      context.outageBudgetMs === 0 || context.outage?.overdue === true || context.rides >= context.ridesMax,
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
    saveBounds: assign((_, { observation }: ObservationParams) => ({
      bounds: observation.valid ? [...observation.bounds] : [],
    })),
    // One actor per partition. Ids are computed here because a spawn's id must be a fixed string
    // (docs/design.md#library-facts); ASSIGNED is queued in the child's mailbox until it starts.
    spawnPartitions: enqueueActions(({ context, enqueue }) => {
      // An entry exists exactly while its actor may be alive: created with the spawn.
      enqueue.assign({ partitions: context.assignment.map(newEntry) });
      for (const partition of context.assignment) {
        const id = partitionActorId(partition);
        const input = {
          namespace: context.namespace,
          partition,
          generation: context.generation,
          bounds: boundsFor(context, partition),
        };
        enqueue.spawnChild('partition', { id, input });
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
    // The first failure is the process's diagnostic: later ones never replace it.
    recordPartitionFailure: assign(({ context, event }) => ({
      failure: context.failure ?? (event.type === 'PARTITION_ENDED' ? partitionFailureOf(event) : null),
    })),
    recordSourceInvalid: assign(({ context }, { observation }: ObservationParams) => ({
      failure: context.failure ?? { reason: 'source_invalid', partition: null, detail: invalidDetail(observation) },
    })),
    recordConsumerFailure: assign(({ context }, { error }: FailureParams) => ({
      failure: context.failure ?? { reason: 'consumer_failed', partition: null, detail: errorMessage(error) },
    })),
    recordRebalanceViolation: assign(
      ({ context }, { violation }: { violation: keyof typeof rebalanceViolationDetails }) => ({
        failure: context.failure ?? {
          reason: 'rebalance_protocol',
          partition: null,
          detail: rebalanceViolationDetails[violation],
        },
      }),
    ),
    // The first transient failure starts the outage clock; later ones belong to the same outage.
    noteOutage: enqueueActions(({ context, enqueue }, { failure }: OutageParams) => {
      if (context.outage !== null) return;
      enqueue.assign({ outage: { failure, overdue: false } });
      if (context.outageBudgetMs > 0) {
        enqueue.raise({ type: 'OUTAGE_EXPIRED' }, { id: outageTimer, delay: context.outageBudgetMs });
      }
    }),
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
        return { ...outage.failure, detail: `${outage.failure.detail}${whySpent(context, outage)}` };
      },
    }),
    resetProbes: assign({ probes: 0 }),
    countRide: assign({ rides: ({ context }) => context.rides + 1 }),
    resetRides: assign({ rides: 0 }),
    countProbe: assign({ probes: ({ context }) => context.probes + 1 }),
    recordStop: assign({ stopReason: ({ event }) => (event.type === 'STOP' ? event.reason : 'stop') }),
    savePolled: assign((_, { records }: RecordsParams) => ({ polled: records })),
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
      // Serial processing (docs/design.md#partition-lifecycle): the next batch waits for the one in flight.
      if (context.inFlight !== null) return;
      const pending = [...context.pending];
      for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
        const partition = next.partition;
        const entry = context.partitions.find((e) => e.partition === partition);
        if (entry?.phase !== 'consuming') continue;
        enqueue.assign({ pending, inFlight: partition });
        const batch = { type: 'BATCH' as const, records: next.records, bounds: boundsFor(context, partition) };
        enqueue.sendTo(partitionActorId(partition), batch);
        return;
      }
      enqueue.assign({ pending: [], inFlight: null });
    }),
    releasePartitions: enqueueActions(({ context, enqueue }, { reason }: ReleaseParams) => {
      for (const entry of context.partitions) {
        if (!isLive(entry) || entry.released) continue;
        enqueue.sendTo(partitionActorId(entry.partition), { type: 'RELEASE', reason });
      }
      enqueue.assign({
        partitions: context.partitions.map((e) => (isLive(e) ? { ...e, released: true } : e)),
        pending: [],
      });
    }),
  },
});
