/**
 * Reads one namespace's decisions, output versions and quarantine from PostgreSQL in export's
 * canonical order (docs/design.md#export) and renders them with the same line functions as
 * `simulate` (domain/export-lines.ts), so any two runs compare with diff.
 *
 * Rows are read in pages by keyset (the primary key order), so an export of any size needs
 * memory for one page only. Text columns are COLLATE "C": SQL order is code-point order.
 * The tables are keyed by the namespace's id (migration 0006), resolved once per read.
 */
import type { Decision, Outcome } from '../domain/decision.js';
import { outcomes } from '../domain/decision.js';
import { decisionLine, outputLine, quarantineLine } from '../domain/export-lines.js';
import type { BalanceStatus, OutputVersion } from '../domain/output-version.js';
import { namespaceId } from '../io/store/namespace-registry.js';
import type { Queryable } from '../io/store/postgres.js';
import { assertInvariant } from '../kernel/invariant.js';
import { int8ToSafeInteger, nullableInt8ToSafeInteger } from '../kernel/safe-integer.js';
import type { OutboxRow } from './verify-comparison.js';

/** Rows per page: bounded memory per export, few round trips. */
export const exportPageRows = 5_000;

export interface QuarantinedDecision {
  decision: Decision;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

export interface DecisionRow {
  partition: number;
  record_offset: string;
  outcome: string;
  item: string | null;
  location: string | null;
  txn: string | null;
  rev: number | null;
  quarantined: boolean;
  detail: string | null;
  raw_key?: Buffer | null;
  raw_value?: Buffer | null;
}

interface OutputRow {
  item: string;
  location: string;
  day: string;
  version: number;
  closing: string | null;
  status: string | null;
  retracted: boolean;
  cause_partition: number;
  cause_offset: string;
}

const decisionColumns = 'partition, record_offset, outcome, item, location, txn, rev, quarantined, detail';

/*
 * The page statements: the namespace's id, the page size, then the last row's key. Each is an
 * index range of its table's key that stops at the limit, whatever the planner's statistics
 * say (test/integration/verify-read-plans.test.ts explains each).
 */

/**
 * Set in a transaction that reads pages: right after a drain the statistics do not know the
 * namespace, the planner takes it for a few rows, and it chose another index of the table plus
 * a sort of everything after the keyset — for every page, quadratic in the namespace (issue 34).
 * No page read needs a sort: each has an index in its order.
 */
export const keyOrderReadsSql = 'SET LOCAL enable_sort = off';
/** The same for a session of its own that reads pages outside a transaction (export). */
export const keyOrderSessionSql = 'SET enable_sort = off';
export const decisionsPageSql = `SELECT ${decisionColumns} FROM decisions
      WHERE ns = $1 AND (partition, record_offset) > ($3, $4)
      ORDER BY partition, record_offset LIMIT $2`;

export const quarantinePageSql = `SELECT ${decisionColumns}, raw_key, raw_value FROM decisions
      WHERE ns = $1 AND quarantined AND (partition, record_offset) > ($3, $4)
      ORDER BY partition, record_offset LIMIT $2`;

export const outputVersionsPageSql = `SELECT item, location, day, version, closing, status, retracted, cause_partition,
            cause_offset
       FROM output_versions
      WHERE ns = $1 AND (item, location, day, version) > ($3, $4, $5, $6)
      ORDER BY item, location, day, version LIMIT $2`;

export const versionsWithEnvelopesPageSql = `SELECT item, location, day, version, closing, status, retracted,
            cause_partition, cause_offset, id, record_key, record_value
       FROM output_versions
      WHERE ns = $1 AND (item, location, day, version) > ($3, $4, $5, $6)
      ORDER BY item, location, day, version LIMIT $2`;

/** Every decision ordered by (partition, offset). */
export async function* readDecisions(
  db: Queryable,
  namespace: string,
  pageRows = exportPageRows,
): AsyncGenerator<Decision> {
  for await (const row of pages<DecisionRow>(
    db,
    decisionsPageSql,
    [namespace, pageRows],
    (last) => [last.partition, last.record_offset],
    [-1, -1],
  )) {
    yield decisionOf(row);
  }
}

/** Every quarantined decision with its exact raw bytes, ordered by (partition, offset). */
export async function* readQuarantine(
  db: Queryable,
  namespace: string,
  pageRows = exportPageRows,
): AsyncGenerator<QuarantinedDecision> {
  for await (const row of pages<DecisionRow>(
    db,
    quarantinePageSql,
    [namespace, pageRows],
    (last) => [last.partition, last.record_offset],
    [-1, -1],
  )) {
    assertInvariant(row.raw_key !== undefined && row.raw_value !== undefined, 'quarantine row without raw bytes');
    yield { decision: decisionOf(row), key: bytesOf(row.raw_key), value: bytesOf(row.raw_value) };
  }
}

/** Every output version ordered by (item, location, day, version), strings by code point. */
export async function* readOutputVersions(
  db: Queryable,
  namespace: string,
  pageRows = exportPageRows,
): AsyncGenerator<OutputVersion> {
  for await (const row of pages<OutputRow>(
    db,
    outputVersionsPageSql,
    [namespace, pageRows],
    (last) => [last.item, last.location, last.day, last.version],
    ['', '', '', 0],
  )) {
    yield outputVersionOf(row);
  }
}

/**
 * Every output version with its outbox envelope, ordered by (item, location, day, version): the
 * envelopes live in the versions' rows (migration 0007), so the verifier reads the table once,
 * by its primary key, with `published` judged against the relay cursors read once. (It read
 * the `outbox` view, whose join to the cursors let the planner sort everything after the
 * keyset for every page when it took a freshly written namespace for one row: issue 34.)
 */
export async function* readVersionsWithEnvelopes(
  db: Queryable,
  namespace: string,
  pageRows = exportPageRows,
): AsyncGenerator<{ version: OutputVersion; envelope: OutboxRow }> {
  const cursors = await relayCursors(db, namespace);
  for await (const row of pages<OutputRow & { id: string; record_key: Buffer; record_value: Buffer }>(
    db,
    versionsWithEnvelopesPageSql,
    [namespace, pageRows],
    (last) => [last.item, last.location, last.day, last.version],
    ['', '', '', 0],
  )) {
    const version = outputVersionOf(row);
    const envelope: OutboxRow = {
      partition: row.cause_partition,
      item: row.item,
      location: row.location,
      day: row.day,
      version: row.version,
      key: bytesOf(row.record_key) as Uint8Array,
      value: bytesOf(row.record_value) as Uint8Array,
      published: BigInt(row.id) <= (cursors.get(row.cause_partition) ?? 0n),
    };
    yield { version, envelope };
  }
}

/** Each output partition's relay cursor (`published_through`); a partition without one has published nothing. */
async function relayCursors(db: Queryable, namespace: string): Promise<Map<number, bigint>> {
  const result = await db.query<{ partition: number; published_through: string }>(
    'SELECT partition, published_through FROM relay_partitions WHERE namespace = $1',
    [namespace],
  );
  return new Map(result.rows.map((r) => [r.partition, BigInt(r.published_through)]));
}

export async function* exportDecisionLines(db: Queryable, namespace: string, pageRows?: number) {
  for await (const d of readDecisions(db, namespace, pageRows)) yield decisionLine(d);
}

export async function* exportOutputLines(db: Queryable, namespace: string, pageRows?: number) {
  for await (const v of readOutputVersions(db, namespace, pageRows)) yield outputLine(v);
}

export async function* exportQuarantineLines(db: Queryable, namespace: string, pageRows?: number) {
  for await (const q of readQuarantine(db, namespace, pageRows)) yield quarantineLine(q.decision, q);
}

/** Collects a line generator, e.g. for a comparison in a test or the verifier. */
export async function collectLines(lines: AsyncIterable<string>): Promise<string[]> {
  const all: string[] = [];
  for await (const line of lines) all.push(line);
  return all;
}

/**
 * Keyset pagination: `sql` takes the namespace's id and the page size, then the last row's key
 * columns. The next page is asked for before this one's rows are handed out, so the database
 * reads it while the caller works (two pages in memory at most).
 */
async function* pages<R extends object>(
  db: Queryable,
  sql: string,
  [namespace, pageRows]: [namespace: string, pageRows: number],
  keyOf: (row: R) => unknown[],
  start: unknown[],
): AsyncGenerator<R> {
  assertInvariant(Number.isSafeInteger(pageRows) && pageRows >= 1, `page size ${pageRows}`);
  const nsId = await namespaceId(db, namespace);
  const page = (after: unknown[]): Promise<{ rows: R[] }> => {
    const query = db.query<R & Record<string, unknown>>(sql, [nsId, pageRows, ...after]);
    query.catch(() => {}); // awaited below; a caller that stops early must not leave it unhandled
    return query;
  };
  let next: ReturnType<typeof page> | undefined = page(start);
  while (next) {
    const result: { rows: R[] } = await next;
    const last: R | undefined = result.rows[result.rows.length - 1];
    next = last !== undefined && result.rows.length === pageRows ? page(keyOf(last)) : undefined;
    for (const row of result.rows) yield row;
  }
}

/** A decision row as the domain sees it (the verifier's pages read the same columns). */
export function decisionOf(row: DecisionRow): Decision {
  assertInvariant((outcomes as readonly string[]).includes(row.outcome), `outcome ${row.outcome}`);
  return {
    partition: row.partition,
    offset: int8ToSafeInteger(row.record_offset, 'decision offset'),
    outcome: row.outcome as Outcome,
    item: row.item,
    location: row.location,
    txn: row.txn,
    rev: row.rev,
    quarantined: row.quarantined,
    detail: row.detail,
  };
}

function outputVersionOf(row: OutputRow): OutputVersion {
  assertInvariant(
    row.status === null || row.status === 'NEGATIVE' || row.status === 'LOW' || row.status === 'OK',
    `output status ${row.status}`,
  );
  return {
    item: row.item,
    location: row.location,
    day: row.day,
    version: row.version,
    closing: nullableInt8ToSafeInteger(row.closing, 'output closing'),
    status: row.status as BalanceStatus | null,
    retracted: row.retracted,
    cause: { partition: row.cause_partition, offset: int8ToSafeInteger(row.cause_offset, 'output cause offset') },
  };
}

export function bytesOf(value: Buffer | null): Uint8Array | null {
  return value === null ? null : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}
