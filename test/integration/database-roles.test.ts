/**
 * amends in a schema of its own with the three roles of docs/operations.md ("Database roles and
 * schema"), granted exactly what deploy/postgres-roles.sql grants, run by psql as a DBA would
 * (issue 35, item 1): `amendsctl migrate` as the migrate role; worker, relay, view and
 * source-load as the run role with --no-migrate; wait, inspect, export, verify, explain and
 * balances as the read role, which also reads the SQL read API's views and functions; and each
 * role refused what the others may do. The schema comes from
 * AMENDS_DATABASE_SCHEMA, the way a deployment names it.
 *
 * The roles, their schema and their topics are this file's own and are dropped in afterAll.
 * The suite's database role needs CREATEROLE (the local stack's has it: scripts/stack.sh).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isOneLineDiagnostic, repoRoot, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { allStories, storyRecords, storyRows, twoKeysConfig } from '../support/fixture-stories.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { scratchFile, startAmends, stopAllAmends } from '../support/transport-process.js';

const tag = testName('amends_roles').replaceAll('-', '_');
const schema = `${tag}_ledger`;
const roles = { migrate: `${tag}_migrate`, run: `${tag}_run`, read: `${tag}_read` } as const;
type Role = keyof typeof roles;
const password = 'roles-test-only';
const admin = new pg.Client({ connectionString: testDatabaseUrl });
const topics = new Set<string>();

/** What a process of `role` is started with: its own login, the schema by name. */
function envOf(role: Role): Record<string, string> {
  const url = new URL(testDatabaseUrl);
  url.searchParams.delete('options');
  url.username = roles[role];
  url.password = password;
  return {
    PATH: process.env.PATH ?? '',
    AMENDS_BROKERS: testBrokers,
    AMENDS_DATABASE_URL: url.toString(),
    AMENDS_DATABASE_SCHEMA: schema,
  };
}

async function as(role: Role, args: string[]) {
  return runAmendsctl(args, envOf(role), 120_000);
}

async function ok(role: Role, args: string[]): Promise<string> {
  const r = await as(role, args);
  if (r.code !== 0) throw new Error(`amendsctl ${args.join(' ')} as ${role} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** Table privileges per role in the schema, as PostgreSQL reports them. */
async function tableGrants(role: Role): Promise<Map<string, string>> {
  const rows = await admin.query<{ table_name: string; privileges: string }>(
    `SELECT table_name, string_agg(privilege_type, ',' ORDER BY privilege_type) AS privileges
       FROM information_schema.role_table_grants WHERE grantee = $1 AND table_schema = $2 GROUP BY table_name`,
    [roles[role], schema],
  );
  return new Map(rows.rows.map((r) => [r.table_name, r.privileges]));
}

beforeAll(async () => {
  await admin.connect();
  for (const name of Object.values(roles)) await admin.query(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
  // The DBA running the script may act for the migrate role (a superuser always may).
  await admin.query(`GRANT ${roles.migrate} TO CURRENT_USER`);
  const script = join(repoRoot, 'deploy', 'postgres-roles.sql');
  const vars = ['-v', `schema=${schema}`, '-v', `migrate_role=${roles.migrate}`];
  vars.push('-v', `run_role=${roles.run}`, '-v', `read_role=${roles.read}`);
  // Without the suite's options: psql is given the URL a DBA would give it.
  const plain = new URL(testDatabaseUrl);
  plain.searchParams.delete('options');
  await promisify(execFile)('psql', [plain.toString(), '-X', '-q', ...vars, '-f', script]);
});

afterAll(async () => {
  await stopAllAmends();
  await deleteTestTopics(topics);
  await admin.query(`GRANT ${roles.run}, ${roles.read} TO CURRENT_USER`);
  // One role at a time: one statement for all three drops a shared default ACL twice and fails.
  for (const name of Object.values(roles)) await admin.query(`DROP OWNED BY ${name} CASCADE`);
  for (const name of Object.values(roles)) await admin.query(`DROP ROLE ${name}`);
  await admin.end();
});

/**
 * The read role's explain and balances (issue 36), and its own SQL on the read API
 * (`<schema>_api`, which migration 11 filled in the schema the script made for it).
 */
async function expectReadApiAsReader(manifest: string, namespace: string): Promise<void> {
  const day = ['--item', 'widget', '--location', 'berlin', '--day', '2026-03-05'];
  const explained = JSON.parse(
    await ok('read', ['explain', '--manifest', manifest, ...day, '--as-of', '0:7', '--json']),
  );
  expect(explained.balance).toMatchObject({ version: 3, closing: 20, status: 'OK' });
  const balances = await ok('read', ['balances', '--manifest', manifest, '--format', 'csv']);
  expect(balances.trimEnd().split('\r\n')).toHaveLength(1 + storyRows - 1);
  const reader = new pg.Client({ connectionString: envOf('read').AMENDS_DATABASE_URL });
  await reader.connect();
  try {
    const api = `${schema}_api`;
    const rows = await reader.query(`SELECT * FROM ${api}.balances_as_of($1, '{7}')`, [namespace]);
    expect(rows.rows.filter((r) => r.item === 'widget').map((r) => r.closing)).toEqual(['70', '55', '65', '20']);
    const owner = await admin.query('SELECT nspowner::regrole::text AS owner FROM pg_namespace WHERE nspname = $1', [
      api,
    ]);
    expect(owner.rows).toEqual([{ owner: roles.migrate }]);
  } finally {
    await reader.end();
  }
}

describe('amends in its own schema, with the documented roles and nothing more', () => {
  it('migrates as the migrate role, runs as the run role, reads and verifies as the read role', async () => {
    const runMigrate = await as('run', ['migrate']);
    expect(runMigrate.code).toBe(1);
    expect(isOneLineDiagnostic(runMigrate.stderr)).toBe(true);
    expect(runMigrate.stderr).toMatch(new RegExp(`permission denied for schema ${schema}`));
    expect(await ok('migrate', ['migrate'])).toMatch(/schema version \d+/);

    // Exactly the script's grants on every table and view the migrations made.
    const run = await tableGrants('run');
    const read = await tableGrants('read');
    expect(run.size).toBeGreaterThan(10);
    expect(new Set(run.values())).toEqual(new Set(['INSERT,SELECT,UPDATE']));
    expect(new Set(read.values())).toEqual(new Set(['SELECT']));
    expect([...read.keys()].sort()).toEqual([...run.keys()].sort());

    const topic = testName();
    const namespace = testName();
    topics.add(topic).add(`${topic}-out`);
    const manifestText = await ok('run', [
      ...['source-create', '--namespace', namespace, '--topic', topic],
      ...['--config', twoKeysConfig, '--partitions', '2'],
    ]);
    const manifest = scratchFile(`${topic}.manifest.json`, manifestText);
    await ok('run', ['output-create', '--manifest', manifest, '--topic', `${topic}-out`]);
    const input = scratchFile(`${topic}.jsonl`, allStories());

    const readLoad = await as('read', ['source-load', '--manifest', manifest, '--file', input]);
    expect(readLoad.code).toBe(1);
    expect(readLoad.stderr).toMatch(/permission denied for table/);
    await ok('run', ['source-load', '--no-migrate', '--manifest', manifest, '--file', input]);

    const processes = [
      startAmends('worker', manifest, ['--no-migrate'], envOf('run')),
      startAmends('relay', manifest, ['--no-migrate'], envOf('run')),
      // Without --no-migrate too: a current schema needs nothing the run role lacks.
      startAmends('view', manifest, [], envOf('run')),
    ];
    const drained = JSON.parse(await ok('read', ['wait', '--manifest', manifest, '--drained', '--json']));
    expect(drained).toMatchObject({ drained: true, remaining: { decide: 0, relay: 0, view: 0 } });

    const verdict = JSON.parse(await ok('read', ['verify', '--manifest', manifest, '--json']));
    expect(verdict.verdict).toBe('PASS');
    const view = await ok('read', ['export', '--manifest', manifest, '--what', 'view']);
    expect(view.trimEnd().split('\n')).toHaveLength(storyRows);
    const inspected = JSON.parse(await ok('read', ['inspect', '--manifest', manifest, '--json']));
    expect(inspected.namespace).toBe(namespace);
    expect(await admin.query(`SELECT 1 FROM ${schema}.decisions`)).toHaveProperty('rowCount', storyRecords);
    await expectReadApiAsReader(manifest, namespace);

    // The run role deletes nothing: dropping a namespace is the migrate role's.
    await Promise.all(processes.map((p) => p.stop('SIGTERM')));
    const runDrop = await as('run', ['namespace-drop', '--namespace', namespace, '--yes']);
    expect(runDrop.code).toBe(1);
    expect(runDrop.stderr).toMatch(/permission denied for table/);
  });
});
