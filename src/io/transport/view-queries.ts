/**
 * The view's reads (docs/design.md#view): its per-partition frontiers and counts, and its rows
 * as output versions in canonical order, for the view process, inspect, export and verify.
 */
import { viewLine } from '../../domain/export-lines.js';
import type { BalanceStatus, OutputVersion } from '../../domain/output-version.js';
import { int8ToSafeInteger, nullableInt8ToSafeInteger } from '../../kernel/safe-integer.js';
import { namespaceId } from '../store/namespace-registry.js';
import type { Queryable } from '../store/postgres.js';

export interface ViewCounts {
  applied: number;
  stale: number;
  duplicate: number;
}

export interface ViewPartitionRow extends ViewCounts {
  partition: number;
  frontier: number;
}

export async function readViewPartitions(db: Queryable, namespace: string): Promise<ViewPartitionRow[]> {
  const result = await db.query(
    `SELECT partition, frontier, applied, stale, duplicate FROM view_partitions
      WHERE namespace = $1 ORDER BY partition`,
    [namespace],
  );
  return result.rows.map((r) => ({
    partition: r.partition,
    frontier: int8ToSafeInteger(r.frontier, 'view frontier'),
    applied: int8ToSafeInteger(r.applied, 'view applied'),
    stale: int8ToSafeInteger(r.stale, 'view stale'),
    duplicate: int8ToSafeInteger(r.duplicate, 'view duplicate'),
  }));
}

interface ViewRow {
  item: string;
  location: string;
  day: string;
  version: number;
  closing: string | null;
  status: BalanceStatus | null;
  retracted: boolean;
  cause_partition: number;
  cause_offset: string;
}

/** The view's rows as output versions in canonical order, (item, location, day), by keyset pages. */
/** One page of the view's rows after a key ($3: the first page, which has none). */
export const viewRowsPageSql = `SELECT item, location, day, version, closing, status, retracted, cause_partition, cause_offset
     FROM view_rows
    WHERE ns = $1 AND ($3::bool OR (item, location, day) > ($4, $5, $6))
    ORDER BY item, location, day LIMIT $2`;

export async function* readViewRows(db: Queryable, namespace: string, pageRows = 5_000): AsyncGenerator<OutputVersion> {
  const nsId = await namespaceId(db, namespace);
  let after: [string, string, string] = ['', '', ''];
  let first = true;
  for (;;) {
    const result = await db.query<ViewRow>(viewRowsPageSql, [nsId, pageRows, first, ...after]);
    for (const r of result.rows) {
      yield {
        item: r.item,
        location: r.location,
        day: r.day,
        version: r.version,
        closing: nullableInt8ToSafeInteger(r.closing, 'view closing'),
        status: r.status,
        retracted: r.retracted,
        cause: { partition: r.cause_partition, offset: int8ToSafeInteger(r.cause_offset, 'view cause offset') },
      };
    }
    const lastRow = result.rows[result.rows.length - 1];
    if (lastRow === undefined || result.rows.length < pageRows) return;
    after = [lastRow.item, lastRow.location, lastRow.day];
    first = false;
  }
}

/** `export --what view`: the view's rows in canonical order as view lines. */
export async function* exportViewLines(db: Queryable, namespace: string, pageRows = 5_000): AsyncGenerator<string> {
  for await (const v of readViewRows(db, namespace, pageRows)) yield viewLine(v);
}
