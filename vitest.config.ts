import { defineConfig } from 'vitest/config';
import { testPg18DatabaseUrl } from './test/support/endpoints.js';
import LongestFirstSequencer from './test/support/suite-sequencer.js';

/**
 * Two files side by side (issue 31): one at a time left a third of two cores idle while a
 * file waited on group joins, brokers and child processes; with three at a time the machine
 * was busy 97 % of the run and the files only starved each other. Every file has its own
 * topics and namespaces (or schemas, or a private cluster on ports of its own, taken in turns).
 * AMENDS_TEST_WORKERS sets another count (1: one file at a time, as before).
 */
const filesAtOnce = Number(process.env.AMENDS_TEST_WORKERS ?? 2);

/**
 * The files that run a second time, on PostgreSQL 18 (issue 35, item 9; docs/choices.md,
 * "PostgreSQL 18 beside 15"): what a major can change is the server's side, so the set is the
 * store's statements, locks, notifications and plans (postgres-state*, producer-guard,
 * array-literal, pooled-client), the verifier's and export's page plans (verify-read-plans),
 * the migrate step (migrate-command; the run's setup applies every migration to the empty
 * database first), and one whole chain of real worker, relay and view processes judged by
 * verify (verify.test.ts: PASS, FAIL on tampered rows, INCOMPLETE, the producer guard seen in
 * pg_locks). The rest (the broker's side, the pure core, the CLI, the private clusters) runs
 * once, on the stack's database.
 */
const pg18Files = [
  'test/integration/postgres-state.test.ts',
  'test/integration/postgres-state-revisions.test.ts',
  'test/integration/postgres-state-rollback.test.ts',
  'test/integration/producer-guard.test.ts',
  'test/integration/array-literal.test.ts',
  'test/integration/pooled-client.test.ts',
  'test/integration/verify-read-plans.test.ts',
  'test/integration/migrate-command.test.ts',
  'test/integration/verify.test.ts',
  // The three roles' grants: PostgreSQL 16 changed what CREATEROLE and role membership mean.
  'test/integration/database-roles.test.ts',
  // The SQL read API's inlined functions and their plans (issue 36): the planner's side.
  'test/integration/read-api-plans.test.ts',
  'test/integration/read-api-stability.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    maxWorkers: filesAtOnce,
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          // The stack's database: the machine's major (scripts/stack.sh), or AMENDS_TEST_DATABASE_URL.
          name: 'stack',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          // Integration suites need the real broker and database: this fails the run, never skips.
          globalSetup: ['test/support/require-stack.ts'],
        },
      },
      {
        extends: true,
        test: {
          // A PostgreSQL 18 server of the run's own (require-pg18.ts), the stack's broker.
          name: 'pg18',
          include: pg18Files,
          globalSetup: ['test/support/require-pg18.ts'],
          // Started in the background by that setup: each file waits for it here.
          setupFiles: ['test/support/await-pg18.ts'],
          env: { AMENDS_TEST_DATABASE_URL: testPg18DatabaseUrl },
        },
      },
    ],
  },
});
