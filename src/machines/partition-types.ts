/**
 * The partition actor's vocabulary (docs/design.md#partition-lifecycle): what it is given, what it holds, what it is
 * told and what it tells its group.
 */
import type { PartitionEnd, ReleaseReason, StoreOperation } from './partition-ends.js';
import type { PartitionBounds, SourceRecord } from './ports.js';

/** (namespace, partition, epoch, assignment generation): saved by a compatible claim only. */
export interface OwnershipToken {
  namespace: string;
  partition: number;
  epoch: number;
  generation: number;
}

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

/** What the dashboard shows for a partition (docs/design.md#partition-lifecycle, #dashboard). */
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
  /** The operation under the shared `operationBudgetMs` (its timer is an xstate delay). */
  operation: StoreOperation | null;
  /** Store attempts made in the current operation (at most `storeAttemptsMax`). */
  attempts: number;
  release: ReleaseReason | null;
  lastOutcome: LastOutcome | null;
  end: PartitionEnd | null;
}

/** One decision's records, with the bounds of the post-poll source observation. */
export type BatchEvent = { type: 'BATCH'; records: readonly SourceRecord[]; bounds: PartitionBounds };

export type ReleaseEvent = { type: 'RELEASE'; reason: ReleaseReason };

export type PartitionEvent =
  | { type: 'ASSIGNED' }
  /** The group assigned the consumer at this partition's frontier (explicit offset). */
  | { type: 'POSITIONED' }
  | BatchEvent
  | ReleaseEvent;

/** What the partition tells its group (sent with `sendParent`). */
export type PartitionReport =
  | { type: 'PARTITION_POSITIONED'; partition: number; offset: number }
  | { type: 'PARTITION_SETTLED'; partition: number; frontier: number }
  | { type: 'PARTITION_ENDED'; partition: number; end: PartitionEnd };
