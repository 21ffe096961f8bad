import { withSchemaPath } from '../../src/io/store/database-schema.js';

/** Where the test suites find the real broker and database (cli.md: AMENDS_TEST_*). */
export const testBrokers = process.env.AMENDS_TEST_BROKERS ?? '127.0.0.1:19092';
/** Its sessions work in amends' own schema, as every amends session does (database-schema.ts). */
export const testDatabaseUrl = withSchemaPath(
  process.env.AMENDS_TEST_DATABASE_URL ?? 'postgres://amends:amends-local-only@127.0.0.1:15432/amends?sslmode=disable',
);

/** A fresh name for a topic or namespace that only this test owns (quality.md). */
export function testName(prefix = 'amends-test'): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * The PostgreSQL 18 server of the suite's pg18 project (vitest.config.ts): started by the run
 * (require-pg18.ts) on AMENDS_TEST_PG18_PORT, beside the stack's database of the machine's major.
 */
export const testPg18Port = Number(process.env.AMENDS_TEST_PG18_PORT ?? 24432);
export const testPg18DatabaseUrl = `postgres://amends:amends-local-only@127.0.0.1:${testPg18Port}/amends?sslmode=disable`;
