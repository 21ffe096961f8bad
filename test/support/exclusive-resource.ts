/**
 * A resource only one test file may use at a time while the suite runs files side by side
 * (issue 31): today, a private 3-broker cluster. Two of them starting at once on a 2-core
 * machine (six JVMs beside the suite) took longer than the cluster's start budget and failed
 * both files, so the chaos run and the 3-broker suite take turns. The turn is a PostgreSQL
 * advisory lock of the shared test database, held by a session of its own: it is released
 * when the holder releases it or its process dies, and a waiter that gives up names what it
 * waited for.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { testDatabaseUrl } from './endpoints.js';

export interface ExclusiveHold {
  /** How long the turn took to come. */
  waitedMs: number;
  release(): Promise<void>;
}

/** The advisory lock key of a resource name: the first 8 bytes of its SHA-256, signed. */
function lockKey(name: string): string {
  return createHash('sha256').update(`amends-test-exclusive:${name}`).digest().readBigInt64BE(0).toString();
}

/** Waits up to `budgetMs` for the turn at `name`; fails naming it when the turn does not come. */
export async function holdExclusive(name: string, budgetMs: number): Promise<ExclusiveHold> {
  const client = new pg.Client({ connectionString: testDatabaseUrl, application_name: `amends-test turn ${name}` });
  await client.connect();
  const started = Date.now();
  try {
    await client.query(`SET lock_timeout = ${Math.max(1, Math.round(budgetMs))}`);
    await client.query('SELECT pg_advisory_lock($1::int8)', [lockKey(name)]);
  } catch (error) {
    await client.end().catch(() => {});
    throw new Error(`no turn at the ${name} within ${budgetMs / 1000} s: another test file held it (${error})`);
  }
  return {
    waitedMs: Date.now() - started,
    release: async () => {
      await client.end().catch(() => {});
    },
  };
}

/** The one exclusive resource today. */
export const privateClusterResource = 'private 3-broker cluster';
