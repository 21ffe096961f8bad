/**
 * The SQL read API is a promise (issue 36 item 3, docs/design.md#sql-read-api): version 1's views
 * and functions keep their names, columns, column types and argument lists across migrations, so
 * a dashboard built on them keeps working. The whole surface is written out here as the catalog
 * describes it after every migration; a migration that renames, retypes, drops or reorders any
 * of it fails this test (and must instead keep the old shape, or start a new API version).
 *
 * It also holds the test to account: a renamed column in a freshly migrated schema is seen as a
 * difference, and a role granted the API schema alone (deploy/postgres-roles.sql) reads every view
 * and function and nothing of the internal schema.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/io/store/postgres.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';

const admin = new pg.Client({ connectionString: testDatabaseUrl });
const schemas = new TestSchemas(admin, 'amends_test_api');

/** Version 1 of the API: each view's columns in order, each function's arguments and result. */
const apiVersion1 = {
  views: {
    applied_revisions: [
      'namespace text',
      'namespace_id integer',
      'item text',
      'location text',
      'txn text',
      'rev integer',
      'op text',
      'day text',
      'qty integer',
      'partition integer',
      'record_offset bigint',
      'decided_at timestamp with time zone',
      'raw_key bytea',
      'raw_value bytea',
    ],
    balance_versions: [
      'namespace text',
      'namespace_id integer',
      'item text',
      'location text',
      'day text',
      'version integer',
      'closing bigint',
      'status text',
      'retracted boolean',
      'cause_partition integer',
      'cause_offset bigint',
      'cause_outcome text',
      'cause_txn text',
      'cause_rev integer',
      'committed_at timestamp with time zone',
    ],
    balances: [
      'namespace text',
      'namespace_id integer',
      'item text',
      'location text',
      'day text',
      'version integer',
      'closing bigint',
      'status text',
      'cause_partition integer',
      'cause_offset bigint',
    ],
    configurations: ['namespace text', 'revision integer', 'from_offsets bigint[]', 'config jsonb'],
    decisions: [
      'namespace text',
      'namespace_id integer',
      'partition integer',
      'record_offset bigint',
      'outcome text',
      'item text',
      'location text',
      'txn text',
      'rev integer',
      'quarantined boolean',
      'detail text',
      'decided_at timestamp with time zone',
      'raw_key bytea',
      'raw_value bytea',
    ],
    latest_versions: [
      'namespace text',
      'namespace_id integer',
      'item text',
      'location text',
      'day text',
      'version integer',
      'closing bigint',
      'status text',
      'retracted boolean',
      'cause_partition integer',
      'cause_offset bigint',
    ],
    namespaces: [
      'namespace text',
      'namespace_id integer',
      'source_topic text',
      'source_incarnation text',
      'partitions integer',
      'ledger_origin text',
      'created_at timestamp with time zone',
    ],
    partitions: ['namespace text', 'namespace_id integer', 'partition integer', 'frontier bigint'],
    quarantine: [
      'namespace text',
      'namespace_id integer',
      'partition integer',
      'record_offset bigint',
      'outcome text',
      'item text',
      'location text',
      'txn text',
      'rev integer',
      'detail text',
      'decided_at timestamp with time zone',
      'raw_key bytea',
      'raw_value bytea',
    ],
    transactions: [
      'namespace text',
      'namespace_id integer',
      'item text',
      'location text',
      'txn text',
      'rev integer',
      'op text',
      'day text',
      'qty integer',
      'cause_partition integer',
      'cause_offset bigint',
    ],
  },
  functions: {
    'api_version()': 'integer',
    'balances_as_of(in_namespace text, through bigint[], for_item text DEFAULT NULL::text, for_location text DEFAULT NULL::text, from_day text DEFAULT NULL::text, to_day text DEFAULT NULL::text)':
      'TABLE(item text, location text, day text, version integer, closing bigint, status text, cause_partition integer, cause_offset bigint)',
    'bound(through bigint[], partition integer)': 'bigint',
    'contributions_as_of(in_namespace text, for_item text, for_location text, on_day text, through bigint[])':
      'TABLE(txn text, rev integer, day text, qty integer, partition integer, record_offset bigint, decided_at timestamp with time zone, raw_key bytea, raw_value bytea)',
    'positions_at(in_namespace text, at timestamp with time zone)': 'bigint[]',
    'versions_as_of(in_namespace text, for_item text, for_location text, on_day text, through bigint[])':
      'TABLE(version integer, closing bigint, status text, retracted boolean, cause_partition integer, cause_offset bigint, cause_outcome text, cause_txn text, cause_rev integer, committed_at timestamp with time zone)',
  },
};

/** The API schema as the catalog describes it: what a client of the API can see of it. */
async function describeApi(api: string) {
  const columns = await admin.query<{ relname: string; relkind: string; column: string }>(
    `SELECT c.relname, c.relkind::text AS relkind, a.attname || ' ' || format_type(a.atttypid, a.atttypmod) AS column
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 ORDER BY c.relname, a.attnum`,
    [api],
  );
  const views: Record<string, string[]> = {};
  for (const row of columns.rows) {
    // Only views belong in an API: a table here would be state nobody migrates.
    expect(`${row.relname}:${row.relkind}`).toBe(`${row.relname}:v`);
    views[row.relname] ??= [];
    views[row.relname]?.push(row.column);
  }
  const functions = await admin.query<{ signature: string; result: string }>(
    `SELECT p.proname || '(' || pg_get_function_arguments(p.oid) || ')' AS signature,
            pg_get_function_result(p.oid) AS result
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 ORDER BY 1`,
    [api],
  );
  return { views, functions: Object.fromEntries(functions.rows.map((r) => [r.signature, r.result])) };
}

/** A schema migrated by this build, and the name of its API schema. */
async function migratedSchema(): Promise<{ schema: string; api: string; url: string }> {
  const schema = await schemas.fresh();
  const url = urlForSchema(schema);
  await (await Database.open(url, 'amends-test read api')).close();
  return { schema, api: `${schema}_api`, url };
}

let migrated: { schema: string; api: string; url: string };

beforeAll(async () => {
  await admin.connect();
  migrated = await migratedSchema();
});

afterAll(async () => {
  await schemas.dropAll();
  await admin.end();
});

describe('the SQL read API, version 1', () => {
  it('keeps every view, column, type and function signature of version 1', async () => {
    expect(await describeApi(migrated.api)).toEqual(apiVersion1);
    const version = await admin.query(`SELECT ${migrated.api}.api_version() AS v`);
    expect(version.rows[0].v).toBe(1);
  });

  it('sees a renamed column as a broken promise', async () => {
    const other = await migratedSchema();
    await admin.query(`ALTER VIEW ${other.api}.balances RENAME COLUMN closing TO closing_balance`);
    const described = await describeApi(other.api);
    expect(described).not.toEqual(apiVersion1);
    expect(described.views.balances).toContain('closing_balance bigint');
  });

  it('serves a role granted the API schema alone, and that role nothing internal', async () => {
    const role = testName('amends_test_reader').replaceAll('-', '_');
    const { api, schema } = migrated;
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'reader-test-only'`);
    try {
      // deploy/postgres-roles.sql's grants for the read role, for this API schema.
      await admin.query(`GRANT USAGE ON SCHEMA ${api} TO ${role}`);
      await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${api} TO ${role}`);
      await admin.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${api} TO ${role}`);
      const url = new URL(testDatabaseUrl);
      url.username = role;
      url.password = 'reader-test-only';
      const reader = new pg.Client({ connectionString: url.toString() });
      await reader.connect();
      try {
        for (const view of Object.keys(apiVersion1.views)) {
          await expect(reader.query(`SELECT * FROM ${api}.${view} LIMIT 1`), view).resolves.toBeDefined();
        }
        const calls = [
          `SELECT * FROM ${api}.balances_as_of('nobody', NULL)`,
          `SELECT * FROM ${api}.versions_as_of('nobody', 'widget', 'berlin', '2026-03-05', '{7}')`,
          `SELECT * FROM ${api}.contributions_as_of('nobody', 'widget', 'berlin', '2026-03-05', '{7}')`,
          `SELECT ${api}.positions_at('nobody', now())`,
        ];
        for (const call of calls) await expect(reader.query(call), call).resolves.toBeDefined();
        await expect(reader.query(`SELECT 1 FROM ${schema}.decisions LIMIT 1`)).rejects.toThrow(/permission denied/);
      } finally {
        await reader.end();
      }
    } finally {
      // The role's grants go first (DROP OWNED BY needs membership in the role, which amends lacks).
      await admin.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${api} FROM ${role}`);
      await admin.query(`REVOKE ALL ON ALL FUNCTIONS IN SCHEMA ${api} FROM ${role}`);
      await admin.query(`REVOKE ALL ON SCHEMA ${api} FROM ${role}`);
      await admin.query(`DROP ROLE ${role}`);
    }
  });
});
