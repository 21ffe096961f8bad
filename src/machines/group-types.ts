/**
 * The group actor's vocabulary (docs/design.md#consumer, #partition-lifecycle, #unknown-outcomes):
 * what it is given, what it holds about its partition actors and an outage, the events it is sent,
 * and what it ends with.
 */
import type { PartitionEnd } from './partition-ends.js';
import type { PartitionReport } from './partition-types.js';
import type { PartitionBounds, SourceRecord } from './ports.js';

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
  | 'rebalance_budget'
  | 'database_changed';

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
  /** Rides in a row without a committed decision before exit 1 (default ridesWithoutDecisionMax). */
  ridesMax?: number;
}

/** A transient outage being ridden through (docs/design.md#outages). */
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
  /** Set by the first transient failure; cleared once the group is assigned again (its claims
   * committed and the source observed: both dependencies answer) or a decision settles. */
  outage: Outage | null;
  /** Rides begun since the last settled decision. */
  rides: number;
  ridesMax: number;
  /** Failed probes since the group began riding: the next wait grows with them. */
  probes: number;
}

export interface GroupOutput {
  /** 0 after a clean stop, 1 after a failure (docs/design.md#logs-and-exit). */
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
  | { type: 'STOP'; reason: string }
  /**
   * Another PostgreSQL server answers than before (a failover, a restart, a restored backup:
   * heartbeat-writer.ts): it may have gone back in time, so the group claims afresh.
   */
  | { type: 'DATABASE_CHANGED'; detail: string };

/** The outage clock, raised by the group itself (a delayed event, not a child actor). */
export type OutageClock = { type: 'OUTAGE_EXPIRED' } | { type: 'OUTAGE_QUIET' };

export type GroupEvent = GroupCommand | PartitionReport | OutageClock;

export type PartitionEndedEvent = Extract<PartitionReport, { type: 'PARTITION_ENDED' }>;
