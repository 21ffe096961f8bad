/**
 * Setup file of the pg18 project (vitest.config.ts): each file waits here until the run's
 * PostgreSQL 18 server, started in the background by require-pg18.ts, is ready and migrated,
 * and fails with that start's own error line when it could not start.
 */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';

/** An idle start takes about 5 s; a loaded 2-core machine several times that. */
const startBudgetMs = 120_000;
const pollMs = 100;

const readyFile = inject('pg18ReadyFile');
const deadline = Date.now() + startBudgetMs;
while (!existsSync(readyFile)) {
  if (Date.now() > deadline) {
    throw new Error(`the pg18 project's PostgreSQL 18 server was not ready within ${startBudgetMs / 1000} s`);
  }
  await sleep(pollMs);
}
const state = JSON.parse(readFileSync(readyFile, 'utf8')) as { ok?: true; error?: string };
if (state.ok !== true) throw new Error(`the pg18 project's PostgreSQL 18 server did not start: ${state.error}`);
