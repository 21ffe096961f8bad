/**
 * What `amendsctl inspect` reads from PostgreSQL for one namespace (docs/design.md#inspection):
 * partitions with their last committed work, counts by outcome, output versions, quarantine,
 * outbox, workers' heartbeats and the bounded recent history. A handful of aggregate
 * statements, whatever the namespace's size.
 */

import type { QueryResultRow as QueryRow } from 'pg';
import { outcomes } from '../../domain/decision.js';
import { int8ToSafeInteger, nullableInt8ToSafeInteger } from '../../kernel/safe-integer.js';
import { namespaceId } from './namespace-registry.js';
import type { Queryable } from './postgres.js';

export interface PartitionInspection {
  partition: number;
  epoch: number;
  frontier: number;
  /** The configuration revision in force from the frontier on (migration 0008). */
  config_revision: number;
  owner: string | null;
  last_work: {
    first_offset: number;
    last_offset: number;
    records: number;
    counts: Record<string, number>;
    epoch: number;
    work_elapsed_ns: number;
    committed_at: string;
  } | null;
}

export interface WorkerInspection {
  id: string;
  role: string;
  pid: number;
  started_at: string;
  heartbeat_at: string;
  heartbeat_age_ms: number;
  state: unknown;
}

export interface RecentDecision {
  partition: number;
  offset: number;
  outcome: string;
  txn: string | null;
  rev: number | null;
}

/** The output binding and the view's partitions; null when the namespace has no binding. */
export interface ViewInspection {
  output_topic: string;
  incarnation: string;
  partitions: { partition: number; frontier: number; applied: number; stale: number; duplicate: number }[];
}

export interface StoreInspection {
  partitions: PartitionInspection[];
  counts: Record<string, number>;
  outputs: { versions: number; retractions: number };
  quarantine: number;
  outbox: { pending: number; published: number };
  view: ViewInspection | null;
  workers: WorkerInspection[];
  recent: RecentDecision[];
}

export const recentDefault = 20;
export const recentMax = 1000;

const partitionsSql = `SELECT partition, epoch, frontier, config_revision, owner, last_first_offset, last_last_offset, last_records, last_counts,
              last_epoch, last_work_elapsed_ns, last_committed_at
         FROM partitions WHERE namespace = $1 ORDER BY partition`;

const countsSql = `SELECT outcome, count(*) AS n, count(*) FILTER (WHERE quarantined) AS q
         FROM decisions WHERE ns = $1 GROUP BY outcome`;

const outputsSql = `SELECT count(*) AS versions, count(*) FILTER (WHERE retracted) AS retractions
         FROM output_versions WHERE ns = $1`;

const outboxSql = `SELECT count(*) FILTER (WHERE NOT published) AS pending, count(*) FILTER (WHERE published) AS published
         FROM outbox WHERE ns = $1`;

const workersSql = `SELECT worker_id, role, pid, started_at, heartbeat_at, state,
              (extract(epoch FROM clock_timestamp() - heartbeat_at) * 1000)::bigint AS age_ms
         FROM worker_heartbeats WHERE namespace = $1 ORDER BY role, worker_id`;

/**
 * The latest decisions: each partition's tail read backwards along the primary key, merged by
 * commit time, so the cost is bounded by N, not by the namespace's size. $1 the namespace,
 * $2 N, $3 the namespace's id.
 */
const recentSql = `SELECT partition, record_offset, outcome, txn, rev FROM (
          SELECT d.* FROM partitions p
           CROSS JOIN LATERAL (
             SELECT partition, record_offset, outcome, txn, rev, decided_at FROM decisions
              WHERE ns = $3 AND partition = p.partition
              ORDER BY record_offset DESC LIMIT $2) d
           WHERE p.namespace = $1
           ORDER BY d.decided_at DESC, d.record_offset DESC LIMIT $2) latest
        ORDER BY partition, record_offset`;

const viewSql = `SELECT b.output_topic, b.incarnation, v.partition, v.frontier, v.applied, v.stale, v.duplicate
         FROM output_bindings b JOIN view_partitions v ON v.namespace = b.namespace
        WHERE b.namespace = $1 ORDER BY v.partition`;

/** The per-record tables are read by the namespace's id, the others by its text (migration 0006). */
export async function inspectStore(db: Queryable, namespace: string, recent: number): Promise<StoreInspection> {
  const nsId = await namespaceId(db, namespace);
  const [partitions, counts, outputs, outbox, workers, history, view] = await Promise.all([
    db.query(partitionsSql, [namespace]),
    db.query(countsSql, [nsId]),
    db.query(outputsSql, [nsId]),
    db.query(outboxSql, [nsId]),
    db.query(workersSql, [namespace]),
    db.query(recentSql, [namespace, recent, nsId]),
    db.query(viewSql, [namespace]),
  ]);
  const { byOutcome, quarantine } = decisionCounts(counts.rows);
  return {
    partitions: partitions.rows.map(partitionOf),
    counts: byOutcome,
    outputs: {
      versions: int8ToSafeInteger(outputs.rows[0]?.versions ?? 0, 'versions'),
      retractions: int8ToSafeInteger(outputs.rows[0]?.retractions ?? 0, 'retractions'),
    },
    quarantine,
    outbox: {
      pending: int8ToSafeInteger(outbox.rows[0]?.pending ?? 0, 'outbox pending'),
      published: int8ToSafeInteger(outbox.rows[0]?.published ?? 0, 'outbox published'),
    },
    view: viewOf(view.rows),
    workers: workers.rows.map(workerOf),
    recent: history.rows.map((r) => ({
      partition: r.partition,
      offset: int8ToSafeInteger(r.record_offset, 'offset'),
      outcome: r.outcome,
      txn: r.txn,
      rev: r.rev,
    })),
  };
}

/** Every outcome (zero when none), and the quarantined decisions among them. */
function decisionCounts(rows: readonly QueryRow[]): { byOutcome: Record<string, number>; quarantine: number } {
  const byOutcome: Record<string, number> = Object.fromEntries(outcomes.map((o) => [o, 0]));
  let quarantine = 0;
  for (const row of rows) {
    byOutcome[row.outcome] = int8ToSafeInteger(row.n, 'decision count');
    quarantine += int8ToSafeInteger(row.q, 'quarantine count');
  }
  return { byOutcome, quarantine };
}

function partitionOf(r: QueryRow): PartitionInspection {
  return {
    partition: r.partition,
    epoch: int8ToSafeInteger(r.epoch, 'epoch'),
    frontier: int8ToSafeInteger(r.frontier, 'frontier'),
    config_revision: r.config_revision as number,
    owner: r.owner,
    last_work:
      r.last_first_offset === null
        ? null
        : {
            first_offset: int8ToSafeInteger(r.last_first_offset, 'first offset'),
            last_offset: int8ToSafeInteger(r.last_last_offset, 'last offset'),
            records: r.last_records,
            counts: r.last_counts,
            epoch: int8ToSafeInteger(r.last_epoch, 'last epoch'),
            work_elapsed_ns: int8ToSafeInteger(r.last_work_elapsed_ns, 'work elapsed'),
            committed_at: new Date(r.last_committed_at).toISOString(),
          },
  };
}

function viewOf(rows: readonly QueryRow[]): ViewInspection | null {
  const first = rows[0];
  if (first === undefined) return null;
  return {
    output_topic: first.output_topic,
    incarnation: first.incarnation,
    partitions: rows.map((r) => ({
      partition: r.partition,
      frontier: int8ToSafeInteger(r.frontier, 'view frontier'),
      applied: int8ToSafeInteger(r.applied, 'view applied'),
      stale: int8ToSafeInteger(r.stale, 'view stale'),
      duplicate: int8ToSafeInteger(r.duplicate, 'view duplicate'),
    })),
  };
}

function workerOf(r: QueryRow): WorkerInspection {
  return {
    id: r.worker_id,
    role: r.role,
    pid: r.pid,
    started_at: new Date(r.started_at).toISOString(),
    heartbeat_at: new Date(r.heartbeat_at).toISOString(),
    heartbeat_age_ms: nullableInt8ToSafeInteger(r.age_ms, 'heartbeat age') ?? 0,
    state: r.state,
  };
}
