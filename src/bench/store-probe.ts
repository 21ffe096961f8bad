/**
 * The harness's reads of what the amends processes committed, straight from PostgreSQL:
 * partition frontiers and owners, the commit times of decisions (the throughput clock), the
 * outbox and view progress, and the latency samples (view rows joined with their outbox row).
 * The per-record tables are read by the namespace's id (migration 0006), the others by its text.
 */
import type pg from 'pg';
import { namespaceId } from '../io/store/namespace-registry.js';
import { type PartitionProgress, readPartitionProgress } from '../io/transport/chain-probe.js';

export async function partitionStates(pool: pg.Pool, namespace: string): Promise<Map<number, PartitionProgress>> {
  return new Map((await readPartitionProgress(pool, namespace)).map((r) => [r.partition, r]));
}

/** Decisions per second between the first and the last commit (decisions.decided_at = commit transaction time). */
export interface CommitRate {
  records: number;
  /** Records per second after the first commit: the first commit's records are not in the window it opens. */
  rps: number;
  seconds: number;
  /** Epoch claims beyond the first per partition: rebalances during the run. */
  extraClaims: number;
  /** The server's work per record in each partition's last batch (partitions.last_work_elapsed_ns), µs. */
  serverWorkUsPerRecord: number;
}

export async function commitRate(pool: pg.Pool, namespace: string): Promise<CommitRate> {
  const r = await pool.query<{
    records: string;
    first_batch: string;
    span_s: number | null;
    epochs: string;
    work_us: number | null;
  }>(
    `WITH d AS (SELECT decided_at FROM decisions WHERE ns = $2),
          b AS (SELECT min(decided_at) AS first, max(decided_at) AS last FROM d)
     SELECT (SELECT count(*) FROM d) AS records,
            (SELECT count(*) FROM d, b WHERE d.decided_at = b.first) AS first_batch,
            (SELECT extract(epoch FROM b.last - b.first)::float8 FROM b) AS span_s,
            (SELECT coalesce(sum(epoch - 1), 0) FROM partitions WHERE namespace = $1) AS epochs,
            (SELECT sum(last_work_elapsed_ns)::float8 / nullif(sum(last_records), 0) / 1000
               FROM partitions WHERE namespace = $1) AS work_us`,
    [namespace, await namespaceId(pool, namespace)],
  );
  const row = r.rows[0];
  const records = Number(row?.records ?? 0);
  const seconds = row?.span_s ?? 0;
  const counted = records - Number(row?.first_batch ?? 0);
  return {
    records,
    seconds,
    rps: seconds > 0 ? counted / seconds : 0,
    extraClaims: Number(row?.epochs ?? 0),
    serverWorkUsPerRecord: row?.work_us ?? Number.NaN,
  };
}

/** Whether every outbox row is published and the view has read every output record. */
export async function viewCaughtUp(pool: pg.Pool, namespace: string): Promise<boolean> {
  const r = await pool.query<{ pending: string; behind: string }>(
    `SELECT (SELECT count(*) FROM outbox WHERE ns = $2 AND NOT published) AS pending,
            (SELECT count(*) FROM (SELECT partition, count(*) AS n FROM outbox WHERE ns = $2 GROUP BY partition) o
               LEFT JOIN view_partitions v ON v.namespace = $1 AND v.partition = o.partition
              WHERE coalesce(v.frontier, 0) < o.n) AS behind`,
    [namespace, await namespaceId(pool, namespace)],
  );
  return r.rows[0]?.pending === '0' && r.rows[0]?.behind === '0';
}

export interface LatencySample {
  partition: number;
  offset: number;
  /** output_versions.created_at: the worker's commit statement (transaction time). */
  committedMs: number;
  /** view_rows.applied_at: the clock time of the view's apply. */
  viewedMs: number;
}

/** One sample per view row (the latest version of each day), with its cause and outbox time. */
export async function latencySamples(pool: pg.Pool, namespace: string): Promise<LatencySample[]> {
  const r = await pool.query<{ partition: number; offset: string; committed_ms: number; viewed_ms: number }>(
    `SELECT v.cause_partition AS partition, v.cause_offset AS offset,
            extract(epoch FROM o.created_at)::float8 * 1000 AS committed_ms,
            extract(epoch FROM v.applied_at)::float8 * 1000 AS viewed_ms
       FROM view_rows v
       JOIN output_versions o ON o.ns = v.ns AND o.item = v.item AND o.location = v.location
                    AND o.day = v.day AND o.version = v.version
      WHERE v.ns = $1`,
    [await namespaceId(pool, namespace)],
  );
  return r.rows.map((row) => ({
    partition: row.partition,
    offset: Number(row.offset),
    committedMs: row.committed_ms,
    viewedMs: row.viewed_ms,
  }));
}
