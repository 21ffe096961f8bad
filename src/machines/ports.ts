/**
 * The seams the lifecycle machines talk through (docs/design.md#source-validation, #consumer, #store). Types only, plus
 * the store failure value: the machines never import pg or a Kafka client, and tests
 * `provide` memory implementations of the same ports.
 *
 * Offsets and epochs are JavaScript numbers: safe integers (< 2^53), checked by the adapters
 * when they read int8 / int64 values.
 */
import type { SourceRecord } from '../domain/source-record.js';

export type { SourceRecord };

// ---------------------------------------------------------------------------------------
// The store: `State` (docs/design.md#store)
// ---------------------------------------------------------------------------------------

/** What PostgreSQL holds for one partition: the ownership epoch and the next offset to decide. */
export interface PartitionRow {
  epoch: number;
  /** The frontier: last decided offset + 1 (0 when nothing has been decided). */
  frontier: number;
  /**
   * Set by `observe` when the row holds the observer's epoch under another claim: the database
   * went back in time and handed the epoch out again, so the number is not the observer's.
   */
  elsewhere?: true;
}

export interface ProcessRequest {
  partition: number;
  /** One partition's records in offset order; offsets may have gaps (aborted data, control records). */
  records: readonly SourceRecord[];
  /** The epoch saved in the ownership token: a different durable epoch is a fence. */
  epoch: number;
  /** The frontier this decision starts from: a different durable frontier writes nothing. */
  expectedFrontier: number;
}

/**
 * The answers a completed `process` transaction can give. Nothing is written unless
 * acknowledged. `revision_lost`: the database holds an older configuration revision than one
 * the store decided under (it went back in time past a config-revise), so what it decided
 * under that revision cannot be decided again identically.
 */
export type ProcessOutcome =
  | { kind: 'acknowledged'; frontier: number }
  | { kind: 'fenced'; epoch: number }
  | { kind: 'unexpected_frontier'; frontier: number }
  | { kind: 'revision_lost'; held: number; known: number };

/**
 * Why a store call did not answer:
 * - `unknown_outcome`: the COMMIT may or may not have happened (the connection was lost
 *   during or after COMMIT, or the reply never arrived). Only a fresh observation resolves it.
 * - `failed_before_commit`: nothing was committed (a connection refused, a lock or statement
 *   timeout before COMMIT, a serialization failure): the call may be retried as is.
 */
export type StoreFailureCode = 'unknown_outcome' | 'failed_before_commit';

/** The error value the store rejects with. Anything else a write rejects with counts as unknown. */
export class StoreFailure extends Error {
  readonly code: StoreFailureCode;

  constructor(code: StoreFailureCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreFailure';
    this.code = code;
  }
}

/**
 * Whether a rejected write may have committed. A failure that does not say it happened
 * before COMMIT is treated as unknown: assuming "not committed" could decide an offset twice.
 */
export function outcomeMayHaveCommitted(error: unknown): boolean {
  return !(error instanceof StoreFailure && error.code === 'failed_before_commit');
}

/** The store seam: three I/O methods and nothing else (docs/design.md#store). Every call is cancellable. */
export interface State {
  /** Increments the epoch under the partition row lock; returns the new epoch and the frontier. */
  claim(partition: number, signal: AbortSignal): Promise<PartitionRow>;
  /** Reads the epoch and frontier, installing nothing. */
  observe(partition: number, signal: AbortSignal): Promise<PartitionRow>;
  /** Decides the records in one transaction (all or nothing), fenced by epoch and expected frontier. */
  process(request: ProcessRequest, signal: AbortSignal): Promise<ProcessOutcome>;
}

// ---------------------------------------------------------------------------------------
// The source observer (docs/design.md#source-validation)
// ---------------------------------------------------------------------------------------

/** One partition's broker boundaries: valid seeks lie in [retainedStart, readCommittedEnd]. */
export interface PartitionBounds {
  partition: number;
  /** The log start offset. */
  retainedStart: number;
  /** The last stable offset (read-committed end). It bounds seeks; it never authorizes a commit. */
  readCommittedEnd: number;
}

/** What changed, when the source may no longer be read safely. */
export type SourceInvalidReason =
  /** the topic UUID differs from the manifest's incarnation: the topic was recreated */
  | 'incarnation_changed'
  /** the partition count differs from the configuration: partitions were added */
  | 'partition_count_changed'
  /** `cleanup.policy` contains compact, or finite retention.ms / retention.bytes */
  | 'unsafe_retention'
  /** a retained start > 0: history before the frontier was deleted */
  | 'history_deleted'
  /** a PostgreSQL frontier beyond the broker's read-committed end (found by the machines) */
  | 'frontier_beyond_end';

export type SourceObservation =
  | { valid: true; bounds: readonly PartitionBounds[] }
  | { valid: false; reason: SourceInvalidReason; detail: string };

export interface SourceObserver {
  /**
   * Observes topic metadata, effective configuration and the given partitions' bounds.
   * Rejects only when the observation cannot be made (the machines then stop fatally).
   */
  observe(partitions: readonly number[], signal: AbortSignal): Promise<SourceObservation>;
}

// ---------------------------------------------------------------------------------------
// The consumer the group actor drives (docs/design.md#consumer, #library-facts)
// ---------------------------------------------------------------------------------------

/** A partition to consume from an explicit offset taken from PostgreSQL. */
export interface PartitionPosition {
  partition: number;
  offset: number;
}

export interface SourceConsumer {
  /** Joins the group (subscribe). Rebalances arrive later, from inside `poll`. */
  connect(signal: AbortSignal): Promise<void>;
  /**
   * At most `maxRecords` records (possibly none). The rebalance callbacks run inside this call:
   * the adapter turns them into PARTITIONS_ASSIGNED / PARTITIONS_REVOKED events for the group
   * and answers librdkafka only when the group calls `assign` / `unassign`.
   * When the signal fires (a rebalance or a stop interrupted the poll) the records are dropped:
   * every later position comes from PostgreSQL again.
   */
  poll(maxRecords: number, signal: AbortSignal): Promise<readonly SourceRecord[]>;
  /** Assigns exactly these partitions at these offsets (replacing any assignment). */
  assign(positions: readonly PartitionPosition[], signal: AbortSignal): Promise<void>;
  /** Clears the assignment. */
  unassign(signal: AbortSignal): Promise<void>;
  /** Leaves the group and closes the client; called once, after every partition is released. */
  close(signal: AbortSignal): Promise<void>;
}

/** Everything the worker's machines need from the outside world. */
export interface WorkerPorts {
  state: State;
  source: SourceObserver;
  consumer: SourceConsumer;
}
