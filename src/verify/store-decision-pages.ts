/**
 * The verifier's read of one partition's decisions (docs/design.md#bounded-verifier, step 5), in offset
 * order by keyset pages on the primary key (ns, partition, record_offset): an index range
 * scan that stops at the page limit, so a page costs the same at any depth. The raw bytes
 * are read only for quarantined rows (the only ones compared by bytes).
 */

import type { Queryable } from '../io/store/postgres.js';
import { bytesOf, type DecisionRow, decisionOf } from './export-queries.js';
import type { StoredDecision } from './verify-comparison.js';

/** Rows per page: bounded memory, few round trips. */
export const decisionPageRows = 1_000;

export const decisionPageSql = `
  SELECT record_offset, outcome, item, location, txn, rev, quarantined,
         CASE WHEN quarantined THEN raw_key END AS raw_key,
         CASE WHEN quarantined THEN raw_value END AS raw_value
    FROM decisions
   WHERE ns = $1 AND partition = $2 AND record_offset > $3
   ORDER BY record_offset LIMIT $4`;

/** One partition's decision rows, a page at a time; the next page is read while this one is compared. */
export class StoreDecisionPages {
  private ahead: Promise<StoredDecision[]> | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly nsId: number,
    private readonly partition: number,
    private readonly pageRows = decisionPageRows,
  ) {
    this.ahead = this.read(-1);
  }

  /** The next page; empty once every row has been read. */
  async next(): Promise<StoredDecision[]> {
    if (!this.ahead) return [];
    const page = await this.ahead;
    const last = page[page.length - 1];
    this.ahead = last && page.length === this.pageRows ? this.read(last.offset) : undefined;
    return page;
  }

  private read(after: number): Promise<StoredDecision[]> {
    const query = this.db
      .query<Omit<DecisionRow, 'partition' | 'detail'>>(decisionPageSql, [
        this.nsId,
        this.partition,
        after,
        this.pageRows,
      ])
      .then((result) =>
        result.rows.map((row): StoredDecision => {
          const d = decisionOf({
            partition: this.partition,
            record_offset: row.record_offset,
            outcome: row.outcome,
            item: row.item,
            location: row.location,
            txn: row.txn,
            rev: row.rev,
            quarantined: row.quarantined,
            detail: null,
          });
          // Not a spread: V8's object clone was the slowest part of building the row.
          return Object.assign(d, { key: bytesOf(row.raw_key ?? null), value: bytesOf(row.raw_value ?? null) });
        }),
      );
    query.catch(() => {}); // awaited by next(); a reader that stops early must not leave it unhandled
    return query;
  }
}
