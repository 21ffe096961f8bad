/**
 * A pooled client whose connection dies while it is checked out (issue 17): pg-pool does not
 * listen for its 'error' then, and an unheard 'error' ends the process. withPooledClient
 * (src/io/store/pooled-client.ts) keeps it; the statement's rejection reports the failure, and the
 * dead client never goes back into the pool. Real PostgreSQL, a real terminated backend.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPooledClient } from '../../src/io/store/pooled-client.js';
import { repoRoot } from '../support/amendsctl-process.js';
import { testDatabaseUrl } from '../support/endpoints.js';

const admin = new pg.Client({ connectionString: testDatabaseUrl });
const pool = new pg.Pool({ connectionString: testDatabaseUrl, max: 2 });
pool.on('error', () => {});

beforeAll(async () => {
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await pool.end();
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('a checked-out pooled client', () => {
  it('whose backend is terminated mid-transaction rejects its statement, and the process lives on', async () => {
    const events: string[] = [];
    const failed = withPooledClient(pool, async (client) => {
      await client.query('BEGIN');
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const sleeping = client.query('SELECT pg_sleep(10)');
      // The statement may fail before the admin's reply arrives: it is awaited below, but a
      // rejection nobody listens for yet is reported as unhandled (a full suite saw it).
      sleeping.catch(() => {});
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
      await sleeping;
    });
    await expect(failed).rejects.toThrow(/terminat/);
    // The socket's end comes after the statement's error: give its 'error' event time to fire.
    await sleep(300);
    events.push('alive');
    expect(events).toEqual(['alive']);
    // The dead client was discarded: the pool hands out a working one.
    const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
    expect(rows[0]?.one).toBe(1);
    expect(pool.totalCount).toBeLessThanOrEqual(1);
  });

  it('is only ever checked out through withPooledClient in src', () => {
    const offenders = sourceFiles(join(repoRoot, 'src'))
      .filter((f) => !f.endsWith('pooled-client.ts'))
      .filter((f) => /\bpool\.connect\(\)/.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => f.slice(repoRoot.length + 1))).toEqual([]);
  });
});
