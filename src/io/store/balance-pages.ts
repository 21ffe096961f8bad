/**
 * `amendsctl balances`: the closing balances of every active day as of a bound, read through the
 * read API's `balances_as_of` (migration 0011) in keyset pages of (item, location, day), so a
 * ten-year ledger prints with one page in memory.
 *
 * Keyset pages, not a cursor: a cursor holds a transaction open while the reader (a pager, a slow
 * pipe) waits, and the session's idle-in-transaction limit (postgres.ts sessionLimits) would end
 * it. Pages under one fixed bound need no common snapshot: a version at or below the bound never
 * changes and a later one is never included, so every page answers the same question. "Now" is
 * fixed the same way, as the frontiers read once at the start.
 */
import { assertInvariant } from '../../kernel/invariant.js';
import { int8ToSafeInteger } from '../../kernel/safe-integer.js';
import type { Queryable } from './postgres.js';

/** Rows per page: bounded memory, few round trips. */
export const balancePageRows = 5_000;

export interface BalanceFilter {
  item: string | null;
  location: string | null;
  from: string | null;
  to: string | null;
}

export interface BalanceRow {
  item: string;
  location: string;
  day: string;
  version: number;
  closing: number;
  status: string;
  cause: { partition: number; offset: number };
}

interface Row {
  item: string;
  location: string;
  day: string;
  version: number;
  closing: string;
  status: string;
  cause_partition: number;
  cause_offset: string;
}

/**
 * One page: $1 namespace, $2 through, $3–$6 the filter, $7–$9 the last row's key, $10 the page
 * size. The keyset condition reaches the `output_days` range through the inlined function
 * (test/integration/read-api-plans.test.ts) only in the code-point collation of the function's
 * ordering, hence COLLATE "C": the function's result columns are plain text, and a comparison in
 * the database's default collation would be a filter over the rest of the namespace.
 *
 * No ORDER BY of its own: the function orders its rows (by the index range it reads, no sort),
 * and an outer ORDER BY would sort every row after the keyset for each page, because a filter on
 * a key makes the planner forget the order of that column. The reader checks the order instead
 * (`readBalances`), so a plan that broke it would fail loudly, not page wrongly. Sent unnamed, so
 * each page is planned with its values: a cached generic plan keeps the optional filters as
 * filters, not as the range's bounds.
 */
export const balancePageSql = (api: string) => `
  SELECT b.item, b.location, b.day, b.version, b.closing, b.status, b.cause_partition, b.cause_offset
    FROM ${api}.balances_as_of($1, $2::bigint[], $3, $4, $5, $6) b
   WHERE (b.item COLLATE "C", b.location COLLATE "C", b.day COLLATE "C") > ($7, $8, $9)
   LIMIT $10`;

/** Code-point order of (item, location, day), as SQL's COLLATE "C" orders them. */
function keyAfter(a: readonly [string, string, string], b: readonly [string, string, string]): boolean {
  for (let i = 0; i < 3; i++) {
    const x = Buffer.from(a[i] as string, 'utf8');
    const y = Buffer.from(b[i] as string, 'utf8');
    const c = Buffer.compare(x, y);
    if (c !== 0) return c > 0;
  }
  return false;
}

/** Every active day's balance as of `through`, by (item, location, day); the next page is read while this one is handed out. */
export async function* readBalances(
  db: Queryable,
  api: string,
  namespace: string,
  filter: BalanceFilter,
  through: readonly number[],
  pageRows = balancePageRows,
): AsyncGenerator<BalanceRow> {
  assertInvariant(Number.isSafeInteger(pageRows) && pageRows >= 1, `page size ${pageRows}`);
  const sql = balancePageSql(api);
  const fixed = [namespace, through.map(String), filter.item, filter.location, filter.from, filter.to];
  const page = (after: [string, string, string]) => {
    const query = db.query<Row & Record<string, unknown>>(sql, [...fixed, ...after, pageRows]);
    query.catch(() => {}); // awaited below; a caller that stops early must not leave it unhandled
    return query;
  };
  let previous: [string, string, string] = ['', '', ''];
  let next: ReturnType<typeof page> | undefined = page(previous);
  while (next) {
    const { rows }: { rows: Row[] } = await next;
    const last: Row | undefined = rows[rows.length - 1];
    next = last !== undefined && rows.length === pageRows ? page([last.item, last.location, last.day]) : undefined;
    for (const row of rows) {
      const key: [string, string, string] = [row.item, row.location, row.day];
      assertInvariant(keyAfter(key, previous), `balances out of order: ${key.join(' ')} after ${previous.join(' ')}`);
      previous = key;
      yield {
        item: row.item,
        location: row.location,
        day: row.day,
        version: row.version,
        closing: int8ToSafeInteger(row.closing, 'closing'),
        status: row.status,
        cause: { partition: row.cause_partition, offset: int8ToSafeInteger(row.cause_offset, 'cause offset') },
      };
    }
  }
}
