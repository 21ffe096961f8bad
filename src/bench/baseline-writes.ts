/**
 * What each reference consumer of the bench writes per poll (docs/design.md#benchmarks), into
 * tables of its own named by a prefix; baseline-consumer.ts runs them.
 *
 * - `naive`: the posts summed per (item, location, day), one upsert adding to the balance.
 * - `floor`: the evidence floor, the minimum durable evidence of a poll in ONE statement: a
 *   decision row per record with its raw bytes, an authority upsert per transaction, a version
 *   row per post. No validation, fencing, outbox or derived state.
 * - `connect`: a Kafka Connect JDBC sink in upsert mode: each record's latest revision upserted
 *   by (item, location, txn), one multi-row statement.
 *
 * Every multi-row write uses unnest over array parameters built as the worker builds its own
 * (src/io/store/array-literal.ts), so the baselines get the same cheapest path.
 */
import type pg from 'pg';
import { byteaArray, integerArray, textArray } from '../io/store/array-literal.js';

export type BaselineKind = 'naive' | 'floor' | 'connect';

export interface PolledRecord {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
}

/** The envelope members a baseline reads, when the value parses as JSON at all (no validation). */
interface Revision {
  txn: string;
  rev: number;
  op: string;
  item: string;
  location: string;
  day: string | null;
  qty: number | null;
}

const revMax = 2 ** 31 - 1;

function revisionOf(value: Buffer | null): Revision | undefined {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(value?.toString('utf8') ?? 'null') as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== 'object' || typeof v.txn !== 'string') return undefined;
  // The columns' ranges, not docs/design.md#domain's rules: what does not fit is skipped like garbage.
  if (!Number.isSafeInteger(v.rev) || (v.rev as number) < 1 || (v.rev as number) > revMax) return undefined;
  return {
    txn: v.txn,
    rev: v.rev as number,
    op: String(v.op),
    item: String(v.item),
    location: String(v.location),
    day: typeof v.day === 'string' ? v.day : null,
    qty: Number.isSafeInteger(v.qty) ? (v.qty as number) : null,
  };
}

/** The tables of one baseline, created before its consumers start and dropped after. */
export function baselineTablesSql(kind: BaselineKind, prefix: string): string[] {
  switch (kind) {
    case 'naive':
      return [
        `CREATE TABLE ${prefix}_balances (item text NOT NULL, location text NOT NULL, day text NOT NULL,
           qty bigint NOT NULL, PRIMARY KEY (item, location, day))`,
      ];
    case 'floor':
      return [
        `CREATE TABLE ${prefix}_decisions (partition int NOT NULL, record_offset bigint NOT NULL, raw_key bytea,
           raw_value bytea, PRIMARY KEY (partition, record_offset))`,
        `CREATE TABLE ${prefix}_authority (item text NOT NULL, location text NOT NULL, txn text NOT NULL,
           rev int NOT NULL, op text NOT NULL, day text, qty bigint, PRIMARY KEY (item, location, txn))`,
        `CREATE TABLE ${prefix}_versions (item text NOT NULL, location text NOT NULL, day text NOT NULL,
           cause_partition int NOT NULL, cause_offset bigint NOT NULL, qty bigint NOT NULL,
           PRIMARY KEY (cause_partition, cause_offset))`,
      ];
    case 'connect':
      return [
        `CREATE TABLE ${prefix}_revisions (item text NOT NULL, location text NOT NULL, txn text NOT NULL,
           rev int NOT NULL, op text NOT NULL, day text, qty bigint, PRIMARY KEY (item, location, txn))`,
      ];
  }
}

export function baselineDropSql(kind: BaselineKind, prefix: string): string[] {
  const tables = { naive: ['balances'], floor: ['decisions', 'authority', 'versions'], connect: ['revisions'] }[kind];
  return tables.map((t) => `DROP TABLE IF EXISTS ${prefix}_${t}`);
}

/** Writes one poll; resolves once the database has committed it (autocommit: one statement). */
export function writePoll(
  db: pg.Client,
  kind: BaselineKind,
  prefix: string,
  records: PolledRecord[],
): Promise<unknown> {
  switch (kind) {
    case 'naive':
      return writeNaive(db, prefix, records);
    case 'floor':
      return writeFloor(db, prefix, records);
    case 'connect':
      return writeConnect(db, prefix, records);
  }
}

async function writeNaive(db: pg.Client, prefix: string, records: PolledRecord[]): Promise<void> {
  const sums = new Map<string, { item: string; location: string; day: string; qty: number }>();
  for (const r of records) {
    const v = revisionOf(r.value);
    if (v?.op !== 'post' || v.day === null || v.qty === null) continue;
    const key = `${v.item}\u0000${v.location}\u0000${v.day}`;
    const sum = sums.get(key) ?? { item: v.item, location: v.location, day: v.day, qty: 0 };
    sum.qty += v.qty;
    sums.set(key, sum);
  }
  const rows = [...sums.values()];
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO ${prefix}_balances AS t (item, location, day, qty)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
     ON CONFLICT (item, location, day) DO UPDATE SET qty = t.qty + EXCLUDED.qty`,
    [
      textArray(rows.map((r) => r.item)),
      textArray(rows.map((r) => r.location)),
      textArray(rows.map((r) => r.day)),
      integerArray(rows.map((r) => r.qty)),
    ],
  );
}

type PolledRevision = Revision & { partition: number; offset: number };

/** Each record's revision, parsed once per poll; values that are no envelope at all are left out. */
function revisionsOf(records: PolledRecord[]): PolledRevision[] {
  return records.flatMap((r) => {
    const v = revisionOf(r.value);
    return v === undefined ? [] : [{ ...v, partition: r.partition, offset: r.offset }];
  });
}

/** The latest revision in poll order per (item, location, txn): one upsert row each. */
function latestByTxn(revisions: readonly PolledRevision[]): PolledRevision[] {
  const latest = new Map<string, PolledRevision>();
  for (const v of revisions) latest.set(`${v.item}\u0000${v.location}\u0000${v.txn}`, v);
  return [...latest.values()];
}

function revisionArrays(rows: readonly Revision[]): string[] {
  return [
    textArray(rows.map((r) => r.item)),
    textArray(rows.map((r) => r.location)),
    textArray(rows.map((r) => r.txn)),
    integerArray(rows.map((r) => r.rev)),
    textArray(rows.map((r) => r.op)),
    textArray(rows.map((r) => r.day)),
    integerArray(rows.map((r) => r.qty)),
  ];
}

async function writeFloor(db: pg.Client, prefix: string, records: PolledRecord[]): Promise<void> {
  const revisions = revisionsOf(records);
  const authority = latestByTxn(revisions);
  const posts = revisions.filter((v) => v.op === 'post' && v.day !== null && v.qty !== null);
  // ON CONFLICT DO NOTHING: an at-least-once consumer may read a record twice around a rebalance.
  await db.query(
    `WITH d AS (
       INSERT INTO ${prefix}_decisions (partition, record_offset, raw_key, raw_value)
       SELECT * FROM unnest($1::int[], $2::bigint[], $3::bytea[], $4::bytea[]) ON CONFLICT DO NOTHING RETURNING 1
     ), a AS (
       INSERT INTO ${prefix}_authority AS t (item, location, txn, rev, op, day, qty)
       SELECT * FROM unnest($5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::text[], $11::bigint[])
       ON CONFLICT (item, location, txn) DO UPDATE
          SET rev = EXCLUDED.rev, op = EXCLUDED.op, day = EXCLUDED.day, qty = EXCLUDED.qty
       RETURNING 1
     ), v AS (
       INSERT INTO ${prefix}_versions (item, location, day, cause_partition, cause_offset, qty)
       SELECT * FROM unnest($12::text[], $13::text[], $14::text[], $15::int[], $16::bigint[], $17::bigint[])
       ON CONFLICT DO NOTHING RETURNING 1
     )
     SELECT (SELECT count(*) FROM d) + (SELECT count(*) FROM a) + (SELECT count(*) FROM v) AS rows`,
    [
      integerArray(records.map((r) => r.partition)),
      integerArray(records.map((r) => r.offset)),
      byteaArray(records.map((r) => r.key)),
      byteaArray(records.map((r) => r.value)),
      ...revisionArrays(authority),
      textArray(posts.map((p) => p.item)),
      textArray(posts.map((p) => p.location)),
      textArray(posts.map((p) => p.day)),
      integerArray(posts.map((p) => p.partition)),
      integerArray(posts.map((p) => p.offset)),
      integerArray(posts.map((p) => p.qty)),
    ],
  );
}

async function writeConnect(db: pg.Client, prefix: string, records: PolledRecord[]): Promise<void> {
  const rows = latestByTxn(revisionsOf(records));
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO ${prefix}_revisions AS t (item, location, txn, rev, op, day, qty)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::bigint[])
     ON CONFLICT (item, location, txn) DO UPDATE
        SET rev = EXCLUDED.rev, op = EXCLUDED.op, day = EXCLUDED.day, qty = EXCLUDED.qty`,
    revisionArrays(rows),
  );
}
