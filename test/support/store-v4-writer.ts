/**
 * How amends wrote a batch under schema version 4 (before migration 0005), frozen here so the
 * upgrade test can write a database exactly as that build did: its batch statement, word for
 * word (git 67b886e, src/io/postgres-state.ts `commitBatchSql`), fed with the engine's results
 * for the whole history. The engine is unchanged since, so the rows are the ones that build
 * committed. Test-only: nothing in src may use it.
 */
import type pg from 'pg';
import { type NamespaceConfig, stockKeyId } from '../../src/domain/config.js';
import { decideBatch } from '../../src/domain/decide.js';
import type { LedgerState } from '../../src/domain/ledger-state.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { claimAsOldBuild, oldBatchValues } from './store-old-batch.js';

const outboxChannel = 'amends_outbox';

const v4CommitBatchSql = `
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
                                  cause_partition, cause_offset)
    SELECT $1, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause
      FROM unnest($36::text[], $37::text[], $38::text[], $39::int[], $40::bigint[], $41::text[], $42::bool[],
                  $43::bigint[]) AS u(item, location, day, version, closing, status, retracted, cause)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (namespace, item, location, day) DO UPDATE
       SET version = EXCLUDED.version, closing = EXCLUDED.closing, status = EXCLUDED.status,
           retracted = EXCLUDED.retracted, cause_partition = EXCLUDED.cause_partition,
           cause_offset = EXCLUDED.cause_offset
     WHERE amends_assert(t.version < EXCLUDED.version, 'output version must grow: ' || t.day)
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
                                 AND c.o = cardinality($24) AND c.od = cardinality($36) AND c.od <= c.v,
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

/** Claims the partition and commits `batches` of it with the v4 statement; returns the frontier. */
export async function writeAsSchemaV4(
  client: pg.ClientBase,
  config: NamespaceConfig,
  partition: number,
  batches: readonly SourceRecord[][],
  state: LedgerState,
): Promise<number> {
  const claimed = await claimAsOldBuild(client, config.namespace, partition, 'schema-v4');
  let frontier = claimed.frontier;
  for (const records of batches) {
    const next = (records[records.length - 1] as SourceRecord).offset + 1;
    const values = v4Values(config, partition, claimed.epoch, frontier, next, records, state);
    const result = await client.query(v4CommitBatchSql, values);
    if (result.rows[0]?.committed !== 1) throw new Error(`the v4 batch at ${frontier} did not commit`);
    frontier = next;
  }
  return frontier;
}

/** The v4 statement's 43 parameters (its `commitValues`, with the latest version per day). */
function v4Values(
  config: NamespaceConfig,
  partition: number,
  epoch: number,
  expected: number,
  frontier: number,
  records: readonly SourceRecord[],
  state: LedgerState,
): unknown[] {
  const results = decideBatch(records, config, state);
  const versions = results.flatMap((r) => r.newVersions);
  const latest = new Map<string, number>();
  versions.forEach((v, i) => {
    latest.set(`${stockKeyId(v.item, v.location)}\u0000${v.day}`, i);
  });
  const last = [...latest.values()].map((i) => versions[i] as (typeof versions)[number]);
  return [
    ...oldBatchValues(config, partition, epoch, expected, frontier, records, results),
    last.map((v) => v.item),
    last.map((v) => v.location),
    last.map((v) => v.day),
    last.map((v) => v.version),
    last.map((v) => v.closing),
    last.map((v) => v.status),
    last.map((v) => v.retracted),
    last.map((v) => v.cause.offset),
  ];
}
