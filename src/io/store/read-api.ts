/**
 * The questions `amendsctl explain` and `balances` ask, through the SQL read API (migration 0011,
 * docs/design.md#sql-read-api) and nothing else, so the CLI and a BI tool see the same answers.
 * Every API object is named with the API schema's name (`api`, read-api-schema.ts: amends' schema
 * with `_api` appended, a plain name that needs no quoting).
 *
 * Times come back as text with microseconds (`…T10:00:00.123456Z`): a decision time a user copies
 * into `--as-of-time` must include the decisions it names, which a millisecond Date would round
 * below.
 */
import { assertInvariant } from '../../kernel/invariant.js';
import { int8ToSafeInteger, nullableInt8ToSafeInteger } from '../../kernel/safe-integer.js';
import type { Queryable } from './postgres.js';

/** A timestamptz as UTC text with its microseconds. */
const utcText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Each partition's frontier (the next offset to decide), partition 0 first. */
export async function readFrontiers(db: Queryable, api: string, namespace: string): Promise<number[]> {
  const result = await db.query<{ partition: number; frontier: string }>(
    `SELECT partition, frontier FROM ${api}.partitions WHERE namespace = $1 ORDER BY partition`,
    [namespace],
  );
  return result.rows.map((row, i) => {
    assertInvariant(row.partition === i, `partition ${row.partition} of ${namespace} out of order`);
    return int8ToSafeInteger(row.frontier, 'frontier');
  });
}

/** Per partition, the last offset decided at or before `at` (-1: none). */
export async function positionsAt(db: Queryable, api: string, namespace: string, at: string): Promise<number[]> {
  const result = await db.query<{ through: string[] | null }>(
    `SELECT ${api}.positions_at($1, $2::timestamptz)::text[] AS through`,
    [namespace, at],
  );
  const through = result.rows[0]?.through;
  assertInvariant(Array.isArray(through), `no positions for namespace ${namespace}`);
  return through.map((o) => int8ToSafeInteger(o, 'position'));
}

export interface SourceCoordinates {
  partition: number;
  offset: number;
}

/** One version of a day, with the decision that caused it. */
export interface DayVersion {
  version: number;
  closing: number | null;
  status: string | null;
  retracted: boolean;
  cause: SourceCoordinates & { outcome: string | null; txn: string | null; rev: number | null };
  committed_at: string;
}

/** Every version of the day, oldest first (the as-of bound is the caller's: it also counts later ones). */
export async function readDayVersions(
  db: Queryable,
  api: string,
  key: { namespace: string; item: string; location: string; day: string },
): Promise<DayVersion[]> {
  const result = await db.query<{
    version: number;
    closing: string | null;
    status: string | null;
    retracted: boolean;
    cause_partition: number;
    cause_offset: string;
    cause_outcome: string | null;
    cause_txn: string | null;
    cause_rev: number | null;
    committed_at: string;
  }>(
    `SELECT version, closing, status, retracted, cause_partition, cause_offset, cause_outcome, cause_txn, cause_rev,
            ${utcText('committed_at')} AS committed_at
       FROM ${api}.versions_as_of($1, $2, $3, $4, NULL)`,
    [key.namespace, key.item, key.location, key.day],
  );
  return result.rows.map((row) => ({
    version: row.version,
    closing: nullableInt8ToSafeInteger(row.closing, 'closing'),
    status: row.status,
    retracted: row.retracted,
    cause: {
      partition: row.cause_partition,
      offset: int8ToSafeInteger(row.cause_offset, 'cause offset'),
      outcome: row.cause_outcome,
      txn: row.cause_txn,
      rev: row.cause_rev,
    },
    committed_at: row.committed_at,
  }));
}

/** One transaction's revision as of the bound, as it adds to the closing. */
export interface Contribution {
  txn: string;
  rev: number;
  day: string;
  qty: number;
  source: SourceCoordinates;
  decided_at: string;
  key: Buffer | null;
  value: Buffer | null;
}

/** The transactions that make up the day's closing as of `through`, by (day, source position). */
export async function readContributions(
  db: Queryable,
  api: string,
  key: { namespace: string; item: string; location: string; day: string },
  through: readonly number[],
): Promise<Contribution[]> {
  const result = await db.query<{
    txn: string;
    rev: number;
    day: string;
    qty: number;
    partition: number;
    record_offset: string;
    decided_at: string;
    raw_key: Buffer | null;
    raw_value: Buffer | null;
  }>(
    `SELECT txn, rev, day, qty, partition, record_offset, ${utcText('decided_at')} AS decided_at, raw_key, raw_value
       FROM ${api}.contributions_as_of($1, $2, $3, $4, $5::bigint[])`,
    [key.namespace, key.item, key.location, key.day, through.map(String)],
  );
  return result.rows.map((row) => ({
    txn: row.txn,
    rev: row.rev,
    day: row.day,
    qty: row.qty,
    source: { partition: row.partition, offset: int8ToSafeInteger(row.record_offset, 'offset') },
    decided_at: row.decided_at,
    key: row.raw_key,
    value: row.raw_value,
  }));
}
