/**
 * How far the chain has come for one namespace, read from the outside, straight from
 * PostgreSQL: each partition's epoch, frontier and owner (the workers), how many decisions
 * are written, and the outbox's rows published and pending (the relay); the view's own
 * progress is `readViewPartitions` (output-view.ts). Read-only. The showcase, the benchmark
 * and the test suites poll these reads while they wait for the chain (poll-until.ts).
 */
import { int8ToSafeInteger } from '../../kernel/safe-integer.js';
import type { Queryable } from '../store/postgres.js';

export interface PartitionProgress {
  partition: number;
  epoch: number;
  frontier: number;
  owner: string | null;
}

export interface OutboxProgress {
  total: number;
  pending: number;
}

/**
 * The per-record tables are keyed by the namespace's id (migration 0006); a namespace not
 * registered yet (no worker has started) reads as empty rather than failing.
 */
const namespaceIdOf = '(SELECT id FROM namespaces WHERE namespace = $1)';

/** The namespace's partitions rows, by partition. */
export async function readPartitionProgress(db: Queryable, namespace: string): Promise<PartitionProgress[]> {
  const result = await db.query<{ partition: number; epoch: string; frontier: string; owner: string | null }>(
    'SELECT partition, epoch, frontier, owner FROM partitions WHERE namespace = $1 ORDER BY partition',
    [namespace],
  );
  return result.rows.map((r) => ({
    partition: r.partition,
    epoch: int8ToSafeInteger(r.epoch, 'epoch'),
    frontier: int8ToSafeInteger(r.frontier, 'frontier'),
    owner: r.owner,
  }));
}

/** How many source records have a decision. */
export async function readDecisionCount(db: Queryable, namespace: string): Promise<number> {
  const result = await db.query<{ n: string }>(`SELECT count(*) AS n FROM decisions WHERE ns = ${namespaceIdOf}`, [
    namespace,
  ]);
  return int8ToSafeInteger(result.rows[0]?.n ?? '0', 'decision count');
}

/** The outbox's rows, and how many of them the relay has not published yet. */
export async function readOutboxProgress(db: Queryable, namespace: string): Promise<OutboxProgress> {
  const result = await db.query<{ total: string; pending: string }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE NOT published) AS pending
       FROM outbox WHERE ns = ${namespaceIdOf}`,
    [namespace],
  );
  return {
    total: int8ToSafeInteger(result.rows[0]?.total ?? '0', 'outbox rows'),
    pending: int8ToSafeInteger(result.rows[0]?.pending ?? '0', 'pending outbox rows'),
  };
}
