/**
 * The partition machine's model: which stimuli each state can meet, as named variants.
 * A variant becomes a concrete event against a snapshot, so the same variant drives both the
 * xstate/graph traversal (over the real machine's definition) and the run of the real actor,
 * each against its own context.
 */
import type { EventObject, SnapshotFrom, StateValue } from 'xstate';
import type { PartitionInput, partitionMachine } from '../../src/machines/partition-machine.js';
import { StoreFailure } from '../../src/machines/ports.js';

export type PartitionSnapshot = SnapshotFrom<typeof partitionMachine>;

export type ModelEvent = EventObject & { variant: string; [field: string]: unknown };

export const partitionInput: PartitionInput = {
  namespace: 'model',
  partition: 0,
  generation: 1,
  bounds: { partition: 0, retainedStart: 0, readCommittedEnd: 100 },
};

/** The frontier PostgreSQL holds when the model's partition is claimed (> 0, so a batch can lag it). */
export const claimedFrontier = 3;

const variantsByState: Record<string, string[]> = {
  unassigned: ['ASSIGNED', 'RELEASE'],
  'claiming.claim': [
    'claim:compatible',
    'claim:foreign',
    'claim:outOfBounds',
    'claim:unknown',
    'claim:beforeCommit',
    'budget',
    'RELEASE',
  ],
  'claiming.observeAfterUnknown': ['observe:ok', 'observe:error', 'budget', 'RELEASE'],
  'claiming.wait': ['retry', 'RELEASE'],
  'seeking.observeStore': [
    'observe:same',
    'observe:foreignEpoch',
    'observe:sameElsewhere',
    'observe:epochBehind',
    'observe:frontierBehind',
    'observe:moved',
    'observe:error',
    'budget',
    'RELEASE',
  ],
  'seeking.wait': ['retry', 'RELEASE'],
  'seeking.observeSource': ['source:valid', 'source:excludes', 'source:invalid', 'source:error', 'budget', 'RELEASE'],
  'seeking.awaitingAssign': ['POSITIONED', 'budget', 'RELEASE'],
  'processing.idle': ['BATCH:ok', 'BATCH:behind', 'BATCH:excludes', 'RELEASE'],
  'processing.deciding.committing': [
    'process:ack',
    'process:ackWrong',
    'process:fenced',
    'process:fencedBehind',
    'process:unexpected',
    'process:frontierBehind',
    'process:revisionLost',
    'process:unknown',
    'process:beforeCommit',
    'budget',
    'RELEASE',
  ],
  'processing.deciding.recovering': [
    'observe:committed',
    'observe:committedElsewhere',
    'observe:notCommitted',
    'observe:otherEpoch',
    'observe:otherFrontier',
    'observe:epochBehind',
    'observe:frontierBehind',
    'observe:error',
    'budget',
    'RELEASE',
  ],
  'processing.deciding.waiting': ['retry', 'RELEASE'],
};

/** "processing.deciding.committing" for {processing: {deciding: 'committing'}}. */
export function leafPath(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [key, child] = Object.entries(value)[0] ?? ['', undefined];
  return child === undefined ? key : `${key}.${leafPath(child)}`;
}

/** The compound state owning the running operation budget. */
function budgetNode(leaf: string): string {
  if (leaf.startsWith('claiming')) return 'partition.claiming';
  if (leaf.startsWith('seeking')) return 'partition.seeking';
  return 'partition.processing.deciding';
}

function record(offset: number) {
  return { partition: 0, offset, key: new Uint8Array([123, 125]), value: null };
}

function lastOffset(snapshot: PartitionSnapshot): number {
  return snapshot.context.batch[snapshot.context.batch.length - 1]?.offset ?? -1;
}

const wideBounds = { partition: 0, retainedStart: 0, readCommittedEnd: 100 };

export function instantiate(variant: string, snapshot: PartitionSnapshot): ModelEvent {
  const ctx = snapshot.context;
  const leaf = leafPath(snapshot.value);
  const epoch = ctx.token?.epoch ?? 0;
  const frontier = ctx.frontier ?? 0;
  const expected = ctx.expectedFrontier ?? 0;
  const done = (id: string, output: unknown): ModelEvent => ({ type: `xstate.done.actor.${id}`, output, variant });
  const error = (id: string, e: unknown): ModelEvent => ({ type: `xstate.error.actor.${id}`, error: e, variant });
  const unknown = new StoreFailure('unknown_outcome', 'the connection closed during COMMIT');
  const beforeCommit = new StoreFailure('failed_before_commit', 'lock timeout');
  switch (variant) {
    case 'ASSIGNED':
    case 'POSITIONED':
      return { type: variant, variant };
    case 'RELEASE':
      return { type: 'RELEASE', reason: 'revoked', variant };
    case 'budget':
      return { type: `xstate.after.operationBudget.${budgetNode(leaf)}`, variant };
    case 'retry':
      return { type: `xstate.after.retryWait.partition.${leaf}`, variant };
    case 'claim:compatible':
      return done('claim', { epoch: ctx.epochFloor + 1, frontier: claimedFrontier });
    case 'claim:foreign':
      return done('claim', { epoch: ctx.epochFloor, frontier: claimedFrontier });
    case 'claim:outOfBounds':
      return done('claim', { epoch: ctx.epochFloor + 1, frontier: ctx.bounds.readCommittedEnd + 1 });
    case 'claim:unknown':
      return error('claim', unknown);
    case 'claim:beforeCommit':
      return error('claim', beforeCommit);
    case 'observe:ok':
      return done('observe', { epoch: ctx.epochFloor + 1, frontier: claimedFrontier });
    case 'observe:error':
      return error('observe', new StoreFailure('failed_before_commit', 'connection refused'));
    case 'observe:same':
      return done('observe', { epoch, frontier });
    case 'observe:foreignEpoch':
      return done('observe', { epoch: epoch + 1, frontier });
    // The partition's own epoch under another claim (a database that went back in time).
    case 'observe:sameElsewhere':
      return done('observe', { epoch, frontier, elsewhere: true });
    // Less than this owner holds: the database went back in time (a lost claim, lost commits).
    case 'observe:epochBehind':
      return done('observe', { epoch: epoch - 1, frontier: leaf.endsWith('recovering') ? expected : frontier });
    case 'observe:frontierBehind':
      return done('observe', { epoch, frontier: (leaf.endsWith('recovering') ? expected : frontier) - 1 });
    case 'observe:moved':
      return done('observe', { epoch, frontier: frontier + 1 });
    case 'source:valid':
      return done('observeSource', { valid: true, bounds: [wideBounds] });
    case 'source:excludes':
      return done('observeSource', { valid: true, bounds: [{ ...wideBounds, readCommittedEnd: frontier - 1 }] });
    case 'source:invalid':
      return done('observeSource', { valid: false, reason: 'incarnation_changed', detail: 'topic UUID differs' });
    case 'source:error':
      return error('observeSource', new Error('metadata request timed out'));
    case 'BATCH:ok':
      return { type: 'BATCH', records: [record(frontier), record(frontier + 2)], bounds: wideBounds, variant };
    case 'BATCH:behind':
      return { type: 'BATCH', records: [record(frontier - 1)], bounds: wideBounds, variant };
    case 'BATCH:excludes':
      return {
        type: 'BATCH',
        records: [record(frontier)],
        bounds: { ...wideBounds, readCommittedEnd: frontier - 1 },
        variant,
      };
    case 'process:ack':
      return done('process', { kind: 'acknowledged', frontier: lastOffset(snapshot) + 1 });
    case 'process:ackWrong':
      return done('process', { kind: 'acknowledged', frontier: lastOffset(snapshot) + 2 });
    case 'process:fenced':
      return done('process', { kind: 'fenced', epoch: epoch + 1 });
    case 'process:fencedBehind':
      return done('process', { kind: 'fenced', epoch: epoch - 1 });
    case 'process:frontierBehind':
      return done('process', { kind: 'unexpected_frontier', frontier: expected - 1 });
    case 'process:revisionLost':
      return done('process', { kind: 'revision_lost', held: 1, known: 2 });
    case 'process:unexpected':
      return done('process', { kind: 'unexpected_frontier', frontier: expected + 7 });
    case 'process:unknown':
      return error('process', unknown);
    case 'process:beforeCommit':
      return error('process', beforeCommit);
    case 'observe:committed':
      return done('observe', { epoch, frontier: lastOffset(snapshot) + 1 });
    case 'observe:committedElsewhere':
      return done('observe', { epoch, frontier: lastOffset(snapshot) + 1, elsewhere: true });
    case 'observe:notCommitted':
      return done('observe', { epoch, frontier: expected });
    case 'observe:otherEpoch':
      return done('observe', { epoch: epoch + 1, frontier: expected });
    case 'observe:otherFrontier':
      return done('observe', { epoch, frontier: expected + 50 });
    default:
      throw new Error(`unknown variant ${variant}`);
  }
}

export function partitionEvents(snapshot: PartitionSnapshot): ModelEvent[] {
  if (snapshot.status !== 'active') return [];
  const variants = variantsByState[leafPath(snapshot.value)];
  if (variants === undefined) throw new Error(`no model for state ${leafPath(snapshot.value)}`);
  return variants.map((v) => instantiate(v, snapshot));
}

/** The context a guard can read, abstracted to a finite key: attempts and a pending release. */
export function serializePartition(snapshot: PartitionSnapshot): string {
  return JSON.stringify([snapshot.value, snapshot.context.attempts, snapshot.context.release !== null]);
}
