/**
 * How amends wrote a batch under schema version 7 (before migration 0008, configuration
 * revisions), frozen here so the upgrade test can write a database exactly as that build did:
 * its claim and its batch statement word for word (git 485a587~1, src/io/store/sql/
 * partition-row.ts `claimSql` and commit-batch.ts `commitBatchSql`), its parameters $1–$49 as
 * commit-batch-values.ts built them (later builds add $50 and $51). The window read is frozen too (store-v9-load-window.ts, as builds up to schema 9 sent it); the engine is this build's: migration 0008 changed it not. Test-only: nothing in src may use it.
 */
import type pg from 'pg';
import type { NamespaceConfig } from '../../src/domain/config.js';
import { screenRecord } from '../../src/domain/decide.js';
import { batchNeeds } from '../../src/domain/key-window.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { changedDays, decideOnWindows, newCauses, windowsOf } from '../../src/io/store/batch-windows.js';
import { commitBatchValues } from '../../src/io/store/commit-batch-values.js';
import { type LoadWindowRow, loadWindowValues } from '../../src/io/store/sql/load-window.js';
import { v9LoadWindowSql } from './store-v9-load-window.js';

const outboxChannel = 'amends_outbox';
/** The v7 statement's parameters: this build's less its last two, the revision and the claim. */
const v7Parameters = 49;

const v7ClaimSql = `
  INSERT INTO partitions AS p (namespace, partition, epoch, owner) VALUES ($1, $2, 1, $3)
  ON CONFLICT (namespace, partition)
  DO UPDATE SET epoch = p.epoch + 1, owner = EXCLUDED.owner, claimed_at = now()
  RETURNING epoch, frontier`;

const v7CommitBatchSql = `
  WITH p AS (
    SELECT epoch, frontier FROM partitions WHERE namespace = $1 AND partition = $2 FOR UPDATE
  ), fresh AS (
    SELECT count(*)::int AS stale
      FROM unnest($47::text[], $48::text[], $49::text[]) AS u(item, location, txn)
      CROSS JOIN LATERAL (
        SELECT 1 FROM authority a
         WHERE a.ns = $46::int AND a.item = u.item COLLATE "C" AND a.location = u.location COLLATE "C"
           AND a.txn = u.txn COLLATE "C"
         LIMIT 1) AS held
  ), ok AS (
    SELECT 1 FROM p, fresh WHERE p.epoch = $3 AND p.frontier = $4 AND fresh.stale = 0
  ), d AS (
    INSERT INTO decisions (ns, partition, record_offset, outcome, item, location, txn, rev,
                           raw_key, raw_value, quarantined, detail, epoch)
    SELECT $46::int, $2, u.o, u.outcome, u.item, u.location, u.txn, u.rev, u.k, u.v, u.q, u.detail, $3
      FROM unnest($6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[],
                  $12::bytea[], $13::bytea[], $14::bool[], $15::text[])
           AS u(o, outcome, item, location, txn, rev, k, v, q, detail)
     WHERE EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  ), a AS (
    INSERT INTO authority AS t (ns, item, location, txn, rev, op, day, qty, cause_partition, cause_offset)
    SELECT $46::int, u.item, u.location, u.txn, u.rev, u.op, u.day, u.qty, $2, u.cause
      FROM unnest($16::text[], $17::text[], $18::text[], $19::int[], $20::text[], $21::text[], $22::int[],
                  $23::bigint[]) AS u(item, location, txn, rev, op, day, qty, cause)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (ns, item, location, txn) DO UPDATE
       SET rev = EXCLUDED.rev, op = EXCLUDED.op, day = EXCLUDED.day, qty = EXCLUDED.qty,
           cause_partition = EXCLUDED.cause_partition, cause_offset = EXCLUDED.cause_offset
     WHERE amends_assert(t.rev < EXCLUDED.rev, 'authority revision must grow: ' || t.txn)
    RETURNING 1
  ), v AS (
    INSERT INTO output_versions (ns, item, location, day, version, closing, status, retracted,
                                 cause_partition, cause_offset, record_key, record_value)
    SELECT $46::int, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause, u.k, u.v
      FROM unnest($24::text[], $25::text[], $26::text[], $27::int[], $28::bigint[], $29::text[], $30::bool[],
                  $31::bigint[], $32::bytea[], $33::bytea[]) WITH ORDINALITY
           AS u(item, location, day, version, closing, status, retracted, cause, k, v, n)
     WHERE EXISTS (SELECT 1 FROM ok)
     ORDER BY u.n
    RETURNING 1
  ), od AS (
    INSERT INTO output_days AS t (ns, item, location, day, version, closing, status, retracted,
                                  cause_partition, cause_offset, qty, posts)
    SELECT $46::int, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause, u.qty, u.posts
      FROM unnest($36::text[], $37::text[], $38::text[], $39::int[], $40::bigint[], $41::text[], $42::bool[],
                  $43::bigint[], $44::bigint[], $45::int[])
           AS u(item, location, day, version, closing, status, retracted, cause, qty, posts)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (ns, item, location, day) DO UPDATE
       SET version = EXCLUDED.version, closing = EXCLUDED.closing, status = EXCLUDED.status,
           retracted = EXCLUDED.retracted, cause_partition = EXCLUDED.cause_partition,
           cause_offset = EXCLUDED.cause_offset, qty = EXCLUDED.qty, posts = EXCLUDED.posts
     -- A new version, or the same version with a new total only (a qty-0 post, changes that net out).
     WHERE amends_assert(t.version < EXCLUDED.version
                         OR (t.version = EXCLUDED.version AND t.closing IS NOT DISTINCT FROM EXCLUDED.closing
                             AND t.retracted = EXCLUDED.retracted AND t.cause_offset = EXCLUDED.cause_offset),
                         'output version must grow: ' || t.day)
    RETURNING 1
  ), w AS (
    UPDATE partitions
       SET frontier = $5,
           last_first_offset = $6[1],
           last_last_offset = $6[cardinality($6)],
           last_records = CASE WHEN amends_assert(
                                 c.d = cardinality($6) AND c.a = cardinality($16) AND c.v = cardinality($24)
                                 AND c.od = cardinality($36),
                                 'batch rows written: ' || c.d || ' ' || c.a || ' ' || c.v || ' ' || c.od)
                          THEN cardinality($6) END,
           last_counts = $34::jsonb,
           last_epoch = $3,
           last_work_elapsed_ns = greatest(0, round(extract(epoch FROM clock_timestamp() - transaction_timestamp())
                                                    * 1000000000))::bigint,
           last_committed_at = clock_timestamp()
      FROM (SELECT (SELECT count(*) FROM d) AS d, (SELECT count(*) FROM a) AS a, (SELECT count(*) FROM v) AS v,
                   (SELECT count(*) FROM od) AS od) AS c
     WHERE namespace = $1 AND partition = $2 AND EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  )
  SELECT p.epoch, p.frontier, (SELECT count(*) FROM w)::int AS committed, (SELECT stale FROM fresh) AS stale,
         (SELECT count(*) FROM (SELECT pg_notify('${outboxChannel}', $1) FROM w WHERE $35::bool) AS n)::int AS notified
    FROM (SELECT 1) AS one LEFT JOIN p ON true`;

/** Claims the partition and commits `batches` of it as the v7 build did; returns the frontier. */
export async function writeAsSchemaV7(
  client: pg.ClientBase,
  config: NamespaceConfig,
  partition: number,
  batches: readonly SourceRecord[][],
): Promise<number> {
  const { namespace } = config;
  const claimed = (await client.query(v7ClaimSql, [namespace, partition, 'schema-v7'])).rows[0];
  const epoch = Number(claimed.epoch);
  let frontier = Number(claimed.frontier);
  const nsId = Number((await client.query('SELECT id FROM namespaces WHERE namespace = $1', [namespace])).rows[0]?.id);
  for (const records of batches) {
    const screened = records.map((record) => screenRecord(record, config));
    const needs = batchNeeds(screened);
    const found = await client.query<LoadWindowRow>(
      v9LoadWindowSql,
      loadWindowValues(namespace, nsId, partition, needs),
    );
    const keys = windowsOf(needs, found.rows[0] as LoadWindowRow);
    const results = decideOnWindows(records, screened, keys);
    const next = (records[records.length - 1] as SourceRecord).offset + 1;
    const request = { partition, epoch, expectedFrontier: frontier, records };
    const values = commitBatchValues({
      namespace,
      nsId,
      request,
      results,
      frontier: next,
      days: changedDays(keys, newCauses(results)),
      assumedNew: [],
      revision: 1,
      claim: null,
    }).slice(0, v7Parameters);
    const result = await client.query(v7CommitBatchSql, values);
    if (result.rows[0]?.committed !== 1) throw new Error(`the v7 batch at ${frontier} did not commit`);
    frontier = next;
  }
  return frontier;
}
