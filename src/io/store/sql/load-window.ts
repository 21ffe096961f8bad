/**
 * The batch's window read (postgres-state.ts `loadWindows`, the warm-up's first statement):
 * its text, its row and its parameters.
 */

import type { KeyNeeds } from '../../../domain/key-window.js';
import type { EpochFrontierRow } from './partition-row.js';

/**
 * The partition row and each key's window (key-window.ts) in one snapshot (one statement).
 * $3–$7: the batch's revisions (item, location, txn, rev, post day or NULL), $8 the namespace's
 * id (the per-record tables' key, migration 0006; partitions keep the text). `touched` is
 * `earliestTouchedDay`: a revision newer than the stored one touches its own post day and
 * the day its transaction's stored post holds (LEAST skips NULLs). Every read is an index
 * step: authority by its key, day rows by a range of (ns, item, location, day), the
 * carried day by `output_days_shown`. The day range and the authority lookup are LATERAL
 * subqueries (with ORDER BY, LIMIT), which PostgreSQL does not flatten into joins, so they
 * are always probed per key and per transaction: as joins, a namespace the statistics do not
 * know yet (a new one, or a rebuild, until autovacuum analyzes) looked like one row, and the
 * planner scanned all of its days, or all of its authority into a hash join.
 */
export const loadWindowSql = `
  WITH r AS (
    SELECT u.item, u.location, u.txn, u.rev, u.day COLLATE "C" AS day
      FROM unnest($3::text[], $4::text[], $5::text[], $6::int[], $7::text[]) AS u(item, location, txn, rev, day)
  ), t AS (
    SELECT DISTINCT item, location, txn FROM r
  ), a AS (
    SELECT t.item, t.location, t.txn, h.rev, h.op, h.day, h.qty
      FROM t CROSS JOIN LATERAL (
        SELECT a.rev, a.op, a.day, a.qty FROM authority a
         WHERE a.ns = $8::int AND a.item = t.item COLLATE "C" AND a.location = t.location COLLATE "C"
           AND a.txn = t.txn COLLATE "C"
         LIMIT 1) AS h
  ), touched AS (
    SELECT r.item, r.location, least(r.day, a.day) AS day
      FROM r LEFT JOIN a ON a.item = r.item COLLATE "C" AND a.location = r.location COLLATE "C"
                        AND a.txn = r.txn COLLATE "C"
     WHERE a.rev IS NULL OR r.rev > a.rev
  ), e AS (
    SELECT item, location, min(day) AS day FROM touched WHERE day IS NOT NULL GROUP BY item, location
  ), w AS (
    SELECT f.* FROM e CROSS JOIN LATERAL (
      SELECT o.item, o.location, o.day, o.version, o.closing, o.status, o.retracted, o.qty, o.posts, o.cause_offset
        FROM output_days o
       WHERE o.ns = $8::int AND o.item = e.item COLLATE "C" AND o.location = e.location COLLATE "C"
         AND o.day >= e.day
       ORDER BY o.day) AS f
    UNION ALL
    SELECT c.* FROM e CROSS JOIN LATERAL (
      SELECT o.item, o.location, o.day, o.version, o.closing, o.status, o.retracted, o.qty, o.posts, o.cause_offset
        FROM output_days o
       WHERE o.ns = $8::int AND o.item = e.item COLLATE "C" AND o.location = e.location COLLATE "C"
         AND o.day < e.day AND NOT o.retracted
       ORDER BY o.day DESC LIMIT 1) AS c
  )
  SELECT p.epoch, p.frontier, p.claim,
    (SELECT coalesce(json_agg(json_build_array(item, location, txn, rev, op, day, qty)), '[]') FROM a) AS authority,
    (SELECT coalesce(json_agg(json_build_array(item, location, day)), '[]') FROM e) AS earliest,
    (SELECT coalesce(json_agg(json_build_array(item, location, day, version, closing, status, retracted, qty, posts,
                                               cause_offset)), '[]') FROM w) AS days
  FROM (SELECT 1) AS one LEFT JOIN partitions p ON p.namespace = $1 AND p.partition = $2`;

/** The statement's one row: the partition row (nulls when there is none) and the windows' rows, as JSON arrays. */
export interface LoadWindowRow extends EpochFrontierRow {
  claim: string | null;
  authority: unknown[][];
  earliest: unknown[][];
  days: unknown[][];
}

/** `loadWindowSql`'s parameters: the namespace, the partition, every revision of the batch, the namespace's id. */
export function loadWindowValues(
  namespace: string,
  nsId: number,
  partition: number,
  needs: ReadonlyMap<string, KeyNeeds>,
): unknown[] {
  const revisions = [...needs.values()].flatMap((n) =>
    n.revisions.map((r) => ({ item: n.stockKey.item, location: n.stockKey.location, ...r })),
  );
  return [
    namespace,
    partition,
    revisions.map((r) => r.item),
    revisions.map((r) => r.location),
    revisions.map((r) => r.txn),
    revisions.map((r) => r.rev),
    revisions.map((r) => r.day),
    nsId,
  ];
}
