/**
 * What `amendsctl explain` reads (docs/design.md#explain), in one read-only snapshot of the SQL
 * read API: the bound, the day's versions, and its contributions as of the bound. The
 * benchmark times the same read (src/bench/read-api-measure.ts); src/cli/explain-report.ts
 * turns it into what the command prints.
 */
import { describeAsOf, type Through } from '../../domain/source-position.js';
import { invalidInput } from '../../kernel/amends-error.js';
import { type AsOfRequest, resolveAsOf } from './as-of-bound.js';
import type { Queryable } from './postgres.js';
import { type Contribution, type DayVersion, readContributions, readDayVersions } from './read-api.js';

/**
 * The explanation's statement limit: its contributions are every transaction of the key that
 * posts on the day or before (a key with a million transactions takes seconds), more than the
 * session's 5 s (postgres.ts sessionLimits), and still a bound.
 */
export const explainStatementTimeoutMs = 60_000;

export type ExplainKey = { namespace: string; item: string; location: string; day: string };

/** What explain read: the key's day, its opening, the bound, the versions and contributions then. */
export interface ExplainRead extends ExplainKey {
  opening: number;
  asOf: { kind: 'now' | 'position' | 'time'; time: string | null; through: Through };
  /** The day's versions up to the bound, oldest first (at least one). */
  versions: DayVersion[];
  /** How many versions came after the bound. */
  later: number;
  /** The day's contributions as of the bound; null when the day is retracted then. */
  contributions: Contribution[] | null;
}

/** Everything explain prints, read in one read-only snapshot. */
export async function readExplanation(
  client: Queryable,
  api: string,
  key: ExplainKey,
  opening: number,
  request: AsOfRequest,
): Promise<ExplainRead> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    // Index ranges whatever the statistics say: no question here needs a sort but the last
    // one's of the key's contributions (as verify's and export's page reads, issue 34).
    await client.query('SET LOCAL enable_sort = off');
    await client.query(`SET LOCAL statement_timeout = ${explainStatementTimeoutMs}`);
    const asOf = await resolveAsOf(client, api, key.namespace, request);
    const all = await readDayVersions(client, api, key);
    const first = all[0];
    const label = `${key.item}@${key.location} ${key.day}`;
    if (first === undefined) {
      throw invalidInput(
        `${label} never had a balance: no transaction was ever posted on that day (a closing exists only for days with posts)`,
      );
    }
    const versions = all.filter((v) => v.cause.offset <= (asOf.through[v.cause.partition] ?? -1));
    const current = versions[versions.length - 1];
    if (current === undefined) {
      throw invalidInput(
        `${label} had no balance yet ${describeAsOf(asOf)}: its version 1 was caused at ${first.cause.partition}:${first.cause.offset}`,
      );
    }
    const contributions = current.retracted ? null : await readContributions(client, api, key, asOf.through);
    await client.query('COMMIT');
    return { ...key, opening, asOf, versions, later: all.length - versions.length, contributions };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
