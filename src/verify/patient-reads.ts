/**
 * The verifier's reads inside its store snapshot, each allowed to wait (issue 35: verify on a
 * large namespace under load exited 1 on "canceling statement due to statement timeout").
 *
 * Every amends session starts with a 5 s statement and lock timeout (postgres.ts), right for
 * the worker's short transactions. A verifier's page is bounded by its row limit, but not its
 * time: on a loaded machine, behind a lock a migration holds, or at the end of a partition whose
 * worker has since decided many more rows (invisible to the snapshot, yet scanned past in the
 * index), one page can take longer. Failing the whole verify then throws away minutes of work
 * and says nothing about the namespace.
 *
 * So each read runs inside a savepoint: a read cancelled by the statement or lock timeout is
 * rolled back to it (the REPEATABLE READ snapshot is the transaction's, so it stays) and run
 * again with both timeouts doubled, which then hold for the rest of the snapshot (a database
 * slow for one page is likely slow for the next). Reads on one session are run one at a time,
 * as pg would anyway, so savepoints never interleave. After `patientAttemptsMax` attempts the
 * read fails with one line that says so, never the server's raw text.
 */

import type pg from 'pg';
import { type Queryable, sessionLimits } from '../io/store/postgres.js';
import { operationalError } from '../kernel/amends-error.js';

/** Attempts per read: with the session's 5 s first, waits of 5, 10, 20, 40 and 80 s. */
export const patientAttemptsMax = 5;

/** statement_timeout's cancellation (query_canceled) and lock_timeout's (lock_not_available). */
const timedOutCodes = new Set(['57014', '55P03']);

function timedOut(error: unknown): boolean {
  return timedOutCodes.has(String((error as { code?: unknown }).code));
}

type Run = (text: string, values?: unknown[]) => Promise<pg.QueryResult>;

/**
 * `client` (a session inside the snapshot's transaction) seen through reads that wait;
 * `timeoutMs` is the session's statement timeout at the start.
 */
export function patientReads(client: Queryable, timeoutMs: number, doing: string): Queryable {
  const run = client.query.bind(client) as unknown as Run;
  // No statement timeout at all: only lock_timeout can cancel; start from the usual limit.
  let current = timeoutMs > 0 ? timeoutMs : sessionLimits.statementTimeoutMs;
  let tail: Promise<unknown> = Promise.resolve();
  const attempt = async (text: string, values: unknown[] | undefined): Promise<pg.QueryResult> => {
    for (let n = 1; ; n++) {
      await run('SAVEPOINT verify_read');
      try {
        const result = await run(text, values);
        await run('RELEASE SAVEPOINT verify_read');
        return result;
      } catch (error) {
        if (!timedOut(error)) throw error;
        await run('ROLLBACK TO SAVEPOINT verify_read');
        await run('RELEASE SAVEPOINT verify_read');
        if (n >= patientAttemptsMax) {
          throw operationalError(
            `${doing}: one read was cancelled ${n} times by the statement or lock timeout, the last time after ${current / 1000} s: the database is too busy or a lock is held too long; nothing was judged, run verify again later`,
          );
        }
        current *= 2;
        // Outside the savepoint, so it holds for the rest of the transaction.
        await run(`SET LOCAL statement_timeout = ${current}; SET LOCAL lock_timeout = ${current}`);
      }
    }
  };
  const query = (text: string, values?: unknown[]): Promise<pg.QueryResult> => {
    const next = tail.then(
      () => attempt(text, values),
      () => attempt(text, values),
    );
    tail = next.catch(() => {});
    return next;
  };
  return { query } as unknown as Queryable;
}

/** The session's statement_timeout in milliseconds (0: none). */
export async function statementTimeoutOf(client: Queryable): Promise<number> {
  const result = await (client.query as unknown as Run)(
    "SELECT setting::integer AS ms FROM pg_settings WHERE name = 'statement_timeout'",
  );
  return Number(result.rows[0]?.ms ?? 0);
}
