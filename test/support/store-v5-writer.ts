/**
 * How amends read and wrote a batch under schema version 5 (before migration 0006), frozen
 * here so the upgrade test can write a database exactly as that build did: its window read
 * and its batch statement, word for word (git 24dc473, src/store/postgres-state.ts
 * `loadWindowSql` and `commitBatchSql`), and each batch decided by the engine on the window
 * that read returned, as that build's `PostgresState.process` did. The engine is unchanged
 * since, so the rows are the ones that build committed. Test-only: nothing in src may use it.
 */
import type pg from 'pg';
import type { NamespaceConfig } from '../../src/domain/config.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { type WindowedBuild, writeAsWindowedBuild } from './store-windowed-writer.js';

const outboxChannel = 'amends_outbox';

const v5LoadWindowSql = `
  WITH r AS (
    SELECT u.item, u.location, u.txn, u.rev, u.day COLLATE "C" AS day
      FROM unnest($3::text[], $4::text[], $5::text[], $6::int[], $7::text[]) AS u(item, location, txn, rev, day)
  ), t AS (
    SELECT DISTINCT item, location, txn FROM r
  ), a AS (
    SELECT a.item, a.location, a.txn, a.rev, a.op, a.day, a.qty
      FROM t JOIN authority a ON a.namespace = $1 AND a.item = t.item COLLATE "C"
                             AND a.location = t.location COLLATE "C" AND a.txn = t.txn COLLATE "C"
  ), touched AS (
    SELECT r.item, r.location, least(r.day, a.day) AS day
      FROM r LEFT JOIN a ON a.item = r.item COLLATE "C" AND a.location = r.location COLLATE "C"
                        AND a.txn = r.txn COLLATE "C"
     WHERE a.rev IS NULL OR r.rev > a.rev
  ), e AS (
    SELECT item, location, min(day) AS day FROM touched WHERE day IS NOT NULL GROUP BY item, location
  ), w AS (
    SELECT o.item, o.location, o.day, o.version, o.closing, o.status, o.retracted, o.qty, o.posts, o.cause_offset
      FROM e JOIN output_days o ON o.namespace = $1 AND o.item = e.item COLLATE "C"
                               AND o.location = e.location COLLATE "C" AND o.day >= e.day
    UNION ALL
    SELECT c.* FROM e CROSS JOIN LATERAL (
      SELECT o.item, o.location, o.day, o.version, o.closing, o.status, o.retracted, o.qty, o.posts, o.cause_offset
        FROM output_days o
       WHERE o.namespace = $1 AND o.item = e.item COLLATE "C" AND o.location = e.location COLLATE "C"
         AND o.day < e.day AND NOT o.retracted
       ORDER BY o.day DESC LIMIT 1) AS c
  )
  SELECT p.epoch, p.frontier,
    (SELECT coalesce(json_agg(json_build_array(item, location, txn, rev, op, day, qty)), '[]') FROM a) AS authority,
    (SELECT coalesce(json_agg(json_build_array(item, location, day)), '[]') FROM e) AS earliest,
    (SELECT coalesce(json_agg(json_build_array(item, location, day, version, closing, status, retracted, qty, posts,
                                               cause_offset)), '[]') FROM w) AS days
  FROM (SELECT 1) AS one LEFT JOIN partitions p ON p.namespace = $1 AND p.partition = $2`;

const v5CommitBatchSql = `
  WITH p AS (
    SELECT epoch, frontier FROM partitions WHERE namespace = $1 AND partition = $2 FOR UPDATE
  ), ok AS (
    SELECT 1 FROM p WHERE p.epoch = $3 AND p.frontier = $4
  ), d AS (
    INSERT INTO decisions (namespace, partition, record_offset, outcome, item, location, txn, rev,
                           raw_key, raw_value, quarantined, detail, epoch)
    SELECT $1, $2, u.o, u.outcome, u.item, u.location, u.txn, u.rev, u.k, u.v, u.q, u.detail, $3
      FROM unnest($6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[],
                  $12::bytea[], $13::bytea[], $14::bool[], $15::text[])
           AS u(o, outcome, item, location, txn, rev, k, v, q, detail)
     WHERE EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  ), a AS (
    INSERT INTO authority AS t (namespace, item, location, txn, rev, op, day, qty, cause_partition, cause_offset)
    SELECT $1, u.item, u.location, u.txn, u.rev, u.op, u.day, u.qty, $2, u.cause
      FROM unnest($16::text[], $17::text[], $18::text[], $19::int[], $20::text[], $21::text[], $22::int[],
                  $23::bigint[]) AS u(item, location, txn, rev, op, day, qty, cause)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (namespace, item, location, txn) DO UPDATE
       SET rev = EXCLUDED.rev, op = EXCLUDED.op, day = EXCLUDED.day, qty = EXCLUDED.qty,
           cause_partition = EXCLUDED.cause_partition, cause_offset = EXCLUDED.cause_offset
     WHERE amends_assert(t.rev < EXCLUDED.rev, 'authority revision must grow: ' || t.txn)
    RETURNING 1
  ), v AS (
    INSERT INTO output_versions (namespace, item, location, day, version, closing, status, retracted,
                                 cause_partition, cause_offset)
    SELECT $1, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause
      FROM unnest($24::text[], $25::text[], $26::text[], $27::int[], $28::bigint[], $29::text[], $30::bool[],
                  $31::bigint[]) AS u(item, location, day, version, closing, status, retracted, cause)
     WHERE EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  ), od AS (
    INSERT INTO output_days AS t (namespace, item, location, day, version, closing, status, retracted,
                                  cause_partition, cause_offset, qty, posts)
    SELECT $1, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause, u.qty, u.posts
      FROM unnest($36::text[], $37::text[], $38::text[], $39::int[], $40::bigint[], $41::text[], $42::bool[],
                  $43::bigint[], $44::bigint[], $45::int[])
           AS u(item, location, day, version, closing, status, retracted, cause, qty, posts)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (namespace, item, location, day) DO UPDATE
       SET version = EXCLUDED.version, closing = EXCLUDED.closing, status = EXCLUDED.status,
           retracted = EXCLUDED.retracted, cause_partition = EXCLUDED.cause_partition,
           cause_offset = EXCLUDED.cause_offset, qty = EXCLUDED.qty, posts = EXCLUDED.posts
     -- A new version, or the same version with a new total only (a qty-0 post, changes that net out).
     WHERE amends_assert(t.version < EXCLUDED.version
                         OR (t.version = EXCLUDED.version AND t.closing IS NOT DISTINCT FROM EXCLUDED.closing
                             AND t.retracted = EXCLUDED.retracted AND t.cause_offset = EXCLUDED.cause_offset),
                         'output version must grow: ' || t.day)
    RETURNING 1
  ), o AS (
    INSERT INTO outbox (namespace, partition, item, location, day, version, record_key, record_value)
    SELECT $1, $2, u.item, u.location, u.day, u.version, u.k, u.v
      FROM unnest($24::text[], $25::text[], $26::text[], $27::int[], $32::bytea[], $33::bytea[])
           WITH ORDINALITY AS u(item, location, day, version, k, v, n)
     WHERE EXISTS (SELECT 1 FROM ok)
     ORDER BY u.n
    RETURNING 1
  ), w AS (
    UPDATE partitions
       SET frontier = $5,
           last_first_offset = $6[1],
           last_last_offset = $6[cardinality($6)],
           last_records = CASE WHEN amends_assert(
                                 c.d = cardinality($6) AND c.a = cardinality($16) AND c.v = cardinality($24)
                                 AND c.o = cardinality($24) AND c.od = cardinality($36),
                                 'batch rows written: ' || c.d || ' ' || c.a || ' ' || c.v || ' ' || c.o)
                          THEN cardinality($6) END,
           last_counts = $34::jsonb,
           last_epoch = $3,
           last_work_elapsed_ns = greatest(0, round(extract(epoch FROM clock_timestamp() - transaction_timestamp())
                                                    * 1000000000))::bigint,
           last_committed_at = clock_timestamp()
      FROM (SELECT (SELECT count(*) FROM d) AS d, (SELECT count(*) FROM a) AS a, (SELECT count(*) FROM v) AS v,
                   (SELECT count(*) FROM od) AS od, (SELECT count(*) FROM o) AS o) AS c
     WHERE namespace = $1 AND partition = $2 AND EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  )
  SELECT p.epoch, p.frontier, (SELECT count(*) FROM w)::int AS committed,
         (SELECT count(*) FROM (SELECT pg_notify('${outboxChannel}', $1) FROM w WHERE $35::bool) AS n)::int AS notified
    FROM (SELECT 1) AS one LEFT JOIN p ON true`;

/** The v5 build's statements (no namespace id: the tables were keyed by the text). */
const v5Build: WindowedBuild = {
  schema: 5,
  loadWindowSql: v5LoadWindowSql,
  commitBatchSql: v5CommitBatchSql,
  loadTail: () => [],
  commitTail: () => [],
};

/** Claims the partition and commits `batches` of it as the v5 build did; returns the frontier. */
export function writeAsSchemaV5(
  client: pg.ClientBase,
  config: NamespaceConfig,
  partition: number,
  batches: readonly SourceRecord[][],
): Promise<number> {
  return writeAsWindowedBuild(v5Build, client, config, partition, batches);
}
