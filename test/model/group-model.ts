/**
 * The group machine's model: which stimuli each state can meet, as named variants, for two
 * partitions. Child reports (PARTITION_*) are offered only where a real partition actor could
 * send them: a partition that is released while it has nothing in flight ends at once, so that
 * end is the only event the model offers next (an "auto" step the run does not stimulate).
 */
import type { SnapshotFrom } from 'xstate';
import type { GroupInput, groupMachine, PartitionEntry } from '../../src/machines/group-machine.js';
import { leafPath, type ModelEvent } from './partition-model.js';

export type GroupSnapshot = SnapshotFrom<typeof groupMachine>;

/** Two rides without a decision end the process: the model reaches that edge in few steps. */
export const groupInput: GroupInput = { namespace: 'model', batchSize: 2, ridesMax: 2 };

/** The frontier the model's store holds for every partition when it is claimed. */
export const groupClaimedFrontier = 3;

function isLive(e: PartitionEntry): boolean {
  return e.phase !== 'retired' && e.phase !== 'failed';
}

/** The partition whose decision is in flight: the only one that does not end at once on release. */
export function busyPartition(snapshot: GroupSnapshot): PartitionEntry | undefined {
  const ctx = snapshot.context;
  return ctx.partitions.find((e) => e.partition === ctx.inFlight && e.phase === 'consuming');
}

export function groupVariants(snapshot: GroupSnapshot): string[] {
  if (snapshot.status !== 'active') return [];
  const ctx = snapshot.context;
  const busy = busyPartition(snapshot);
  const autoEnd = ctx.partitions.find((e) => isLive(e) && e.released && e !== busy);
  if (autoEnd !== undefined) return [`auto:${autoEnd.partition}`];
  // A poll may run while the last batch of the previous one commits, and may hold records of
  // that batch's partition too.
  const consuming = ctx.partitions.filter((e) => e.phase === 'consuming').map((e) => e.partition);
  const busyEnds =
    busy === undefined ? [] : [`settled:${busy.partition}`, `fenced:${busy.partition}`, `failed:${busy.partition}`];
  const claiming = ctx.partitions.filter((e) => e.phase === 'claiming').map((e) => e.partition);
  const leaf = leafPath(snapshot.value);
  // The outage clock can tick anywhere; offering it while polling and riding covers its edges.
  const clock = ctx.outage === null ? [] : [ctx.outage.overdue ? 'quiet' : 'expired'];
  switch (leaf) {
    case 'starting':
      return ['connect:done', 'connect:error', 'STOP'];
    case 'running.polling':
      return [
        'poll:empty',
        ...consuming.map((p) => `poll:one:${p}`),
        ...(consuming.length >= 2 ? ['poll:both'] : []),
        'poll:error',
        ...busyEnds,
        'ASSIGNED:both',
        'ASSIGNED:one',
        'REVOKED',
        'LOST',
        'STOP',
        'CHANGED',
        ...clock,
      ];
    case 'running.validatingBatch':
      return ['source:valid', 'source:invalid', 'source:error', ...busyEnds, 'ASSIGNED:one', 'REVOKED', 'STOP'];
    case 'running.deciding':
      return busy === undefined
        ? []
        : [`settled:${busy.partition}`, `fenced:${busy.partition}`, `failed:${busy.partition}`, 'REVOKED', 'STOP'];
    case 'running.assigning.validatingSource':
      return ['source:valid', 'source:invalid', 'source:error', 'budget', 'REVOKED', 'STOP'];
    case 'running.assigning.claiming':
      return [
        ...claiming.flatMap((p) => [`positioned:${p}`, `foreign:${p}`, `back:${p}`, `invalid:${p}`]),
        'budget',
        'REVOKED',
        'STOP',
      ];
    case 'running.assigning.applying':
      return ['assign:done', 'assign:error', 'budget', 'REVOKED', 'STOP'];
    case 'running.revoking.releasing':
      return busy === undefined ? [] : [`finish:${busy.partition}`, `failed:${busy.partition}`, 'REVOKED', 'STOP'];
    case 'running.revoking.unassigning':
      return ['unassign:done', 'unassign:error', 'REVOKED', 'STOP', 'CHANGED'];
    // Only with a decision still in flight: an outage met by the poll that ran alongside it.
    case 'running.riding.releasing':
      return busy === undefined ? [] : [`finish:${busy.partition}`, `failed:${busy.partition}`, 'STOP', ...clock];
    case 'running.riding.probing':
      return ['probe:done', 'probe:invalid', 'probe:error', 'STOP', 'CHANGED', ...clock];
    case 'running.riding.waiting':
      return ['wait', 'STOP', ...clock];
    case 'draining.releasing':
      return busy === undefined ? [] : [`finish:${busy.partition}`, `failed:${busy.partition}`];
    case 'draining.unassigning':
      return ['unassign:done', 'unassign:error'];
    case 'draining.closing':
      return ['close:done', 'close:error'];
    default:
      throw new Error(`no model for group state ${leaf}`);
  }
}

function entryOf(snapshot: GroupSnapshot, partition: number): PartitionEntry {
  const entry = snapshot.context.partitions.find((e) => e.partition === partition);
  if (entry === undefined) throw new Error(`no entry for partition ${partition}`);
  return entry;
}

function record(partition: number, offset: number) {
  return { partition, offset, key: null, value: new Uint8Array([123, 125]) };
}

function observation(invalid: boolean, partitions: readonly number[]) {
  if (invalid) return { valid: false, reason: 'partition_count_changed', detail: '3 partitions, not 2' };
  return {
    valid: true,
    bounds: partitions.map((partition) => ({ partition, retainedStart: 0, readCommittedEnd: 100 })),
  };
}

export function instantiateGroup(variant: string, snapshot: GroupSnapshot): ModelEvent {
  const [name = '', arg, arg2] = variant.split(':');
  const done = (id: string, output: unknown): ModelEvent => ({ type: `xstate.done.actor.${id}`, output, variant });
  const error = (id: string): ModelEvent => ({
    type: `xstate.error.actor.${id}`,
    error: new Error(`${id} failed`),
    variant,
  });
  const p = Number(arg2 ?? arg);
  const ended = (end: unknown): ModelEvent => ({ type: 'PARTITION_ENDED', partition: p, end, variant });
  switch (name) {
    case 'STOP':
      return { type: 'STOP', reason: 'SIGTERM', variant };
    case 'REVOKED':
      return { type: 'PARTITIONS_REVOKED', lost: false, variant };
    case 'LOST':
      return { type: 'PARTITIONS_REVOKED', lost: true, variant };
    case 'CHANGED':
      return { type: 'DATABASE_CHANGED', detail: 'another PostgreSQL server answers', variant };
    case 'ASSIGNED':
      return { type: 'PARTITIONS_ASSIGNED', partitions: arg === 'both' ? [1, 0] : [0], variant };
    case 'budget':
      return { type: 'xstate.after.operationBudget.group.running.assigning', variant };
    case 'wait':
      return { type: 'xstate.after.probeWait.group.running.riding.waiting', variant };
    case 'expired':
      return { type: 'OUTAGE_EXPIRED', variant };
    case 'quiet':
      return { type: 'OUTAGE_QUIET', variant };
    case 'probe':
      if (arg === 'error') return error('probe');
      return done('probe', observation(arg === 'invalid', snapshot.context.assignment));
    case 'connect':
    case 'assign':
    case 'unassign':
    case 'close':
      return arg === 'done' ? done(name, undefined) : error(name);
    case 'poll': {
      if (arg === 'error') return error('poll');
      if (arg === 'empty') return done('poll', []);
      const partitions = arg === 'both' ? [0, 1] : [p];
      // The model's batches hold one record each: one in flight ends at the frontier.
      const next = (q: number) =>
        (entryOf(snapshot, q).frontier ?? 0) + (busyPartition(snapshot)?.partition === q ? 1 : 0);
      return done(
        'poll',
        partitions.map((q) => record(q, next(q))),
      );
    }
    case 'source': {
      if (arg === 'error') return error('observeSource');
      const partitions = leafPath(snapshot.value).includes('assigning')
        ? snapshot.context.assignment
        : snapshot.context.partitions.map((e) => e.partition);
      return done('observeSource', observation(arg === 'invalid', partitions));
    }
    case 'positioned':
      return { type: 'PARTITION_POSITIONED', partition: p, offset: groupClaimedFrontier, variant };
    case 'settled':
      return { type: 'PARTITION_SETTLED', partition: p, frontier: (entryOf(snapshot, p).frontier ?? 0) + 1, variant };
    case 'foreign':
      return ended({ status: 'retired', reason: 'foreign_epoch', detail: 'another owner claimed the partition' });
    case 'fenced':
      return ended({ status: 'retired', reason: 'fenced', detail: 'another owner holds a newer epoch' });
    case 'back':
      return ended({ status: 'failed', reason: 'rolled_back', detail: 'the database went back in time' });
    case 'finish':
    case 'auto':
      return ended({ status: 'retired', reason: 'revoked', detail: 'assignment revoked' });
    case 'failed':
      return ended({ status: 'failed', reason: 'outcome_unresolved', detail: 'observe failed' });
    case 'invalid':
      return ended({ status: 'failed', reason: 'source_invalid', detail: 'frontier_beyond_end: claimed 101 of 100' });
    default:
      throw new Error(`unknown group variant ${variant}`);
  }
}

export function groupEvents(snapshot: GroupSnapshot): ModelEvent[] {
  return groupVariants(snapshot).map((v) => instantiateGroup(v, snapshot));
}

/** The context the guards and the model read, abstracted to a finite key. */
export function serializeGroup(snapshot: GroupSnapshot): string {
  const ctx = snapshot.context;
  return JSON.stringify([
    snapshot.value,
    ctx.partitions.map((e) => [e.partition, e.phase, e.released]),
    ctx.inFlight,
    ctx.pending.length,
    ctx.failure !== null,
    ctx.outage === null ? 'none' : ctx.outage.overdue ? 'overdue' : 'open',
    ctx.rides,
  ]);
}
