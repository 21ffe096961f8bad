/**
 * The database's floor for one durable commit on this machine: a one-row INSERT as its own
 * transaction (one round trip, one WAL flush) into a scratch table, repeated. A worker at
 * batch size 1 commits once per record, so this bounds it from below, whatever it writes.
 */
import type pg from 'pg';
import { withPooledClient } from '../io/store/pooled-client.js';

export interface CommitFloor {
  commits: number;
  ms_per_commit: number;
  commits_per_s: number;
}

export async function measureCommitFloor(pool: pg.Pool, table: string, commits: number): Promise<CommitFloor> {
  return withPooledClient(pool, async (client) => {
    try {
      await client.query(`CREATE TABLE ${table} (n integer)`);
      const started = process.hrtime.bigint();
      for (let i = 0; i < commits; i++) {
        await client.query({ name: 'amends_bench_floor', text: `INSERT INTO ${table} VALUES ($1)`, values: [i] });
      }
      const ms = Number(process.hrtime.bigint() - started) / 1e6 / commits;
      return { commits, ms_per_commit: ms, commits_per_s: 1000 / ms };
    } finally {
      await client.query(`DROP TABLE IF EXISTS ${table}`);
    }
  });
}
