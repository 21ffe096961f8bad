/**
 * inspect, export, explain, balances and tui only read (README: Commands): an unknown namespace, a database
 * without an amends schema, and a schema older than this build's migrations are each a
 * one-line error (exit 1), and the database is exactly as it was afterwards: no namespace
 * registered, nothing created, nothing migrated. The built binaries, the real PostgreSQL;
 * each case in a fresh schema of its own (search_path through the URL), dropped afterwards,
 * so "unchanged" is exact while other suites write to the shared one.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/domain/config.js';
import { applyMigrations, migrations } from '../../src/io/store/migrations.js';
import { Database } from '../../src/io/store/postgres.js';
import {
  isOneLineDiagnostic,
  type ProcessResult,
  repoRoot,
  requireBuild,
  runAmendsctl,
} from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';
import { scratchFile } from '../support/worker-process.js';

const admin = new pg.Client({ connectionString: testDatabaseUrl });
/** A pty run that has not exited by then draws a dashboard: it did not refuse. */
const ptyBudgetMs = 20_000;

const schemas = new TestSchemas(admin, 'amends_test_ro');
const freshSchema = () => schemas.fresh();

/** A valid manifest of a namespace no process has used (its topic need not exist). */
function unknownManifest(): { path: string; namespace: string } {
  const namespace = testName();
  const manifest: Manifest = {
    source_topic: `${namespace}-topic`,
    config: {
      namespace,
      schema_version: 1,
      ledger_origin: '2026-03-01',
      partitions: 2,
      stock_keys: [{ item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 }],
      source_incarnation: `kafka:${'ab'.repeat(16)}`,
    },
  };
  return { path: scratchFile(`${namespace}.manifest.json`, JSON.stringify(manifest)), namespace };
}

/** `amends tui` needs a terminal: run it under script(1)'s pty; stderr arrives there too. */
function runTuiInPty(manifestPath: string, env: Record<string, string>): Promise<ProcessResult> {
  const command = [join(repoRoot, 'bin/amends'), 'tui', '--manifest', manifestPath].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), ptyBudgetMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: '', stderr: output.replaceAll('\r', '') });
    });
  });
}

/** Every read-only command on `manifestPath` against `url`: inspect (human, JSON), export ×5, explain, balances, tui. */
async function everyReadOnlyCommand(manifestPath: string, url: string): Promise<[string, ProcessResult][]> {
  const env = { AMENDS_DATABASE_URL: url, AMENDS_BROKERS: testBrokers };
  const runs: [string, ProcessResult][] = [];
  for (const args of [
    ['inspect', '--manifest', manifestPath],
    ['inspect', '--manifest', manifestPath, '--json'],
    ...['decisions', 'outputs', 'view', 'quarantine', 'revisions'].map((what) => [
      'export',
      '--manifest',
      manifestPath,
      '--what',
      what,
    ]),
    ['explain', '--manifest', manifestPath, '--item', 'widget', '--location', 'berlin', '--day', '2026-03-05'],
    ['balances', '--manifest', manifestPath, '--as-of', '0:0'],
  ]) {
    runs.push([args.join(' '), await runAmendsctl(args, env)]);
  }
  runs.push(['tui', await runTuiInPty(manifestPath, env)]);
  return runs;
}

function expectOneLineRefusals(runs: [string, ProcessResult][], pattern: RegExp): void {
  for (const [command, result] of runs) {
    expect(result.code, `${command}: ${result.stderr}`).toBe(1);
    expect(isOneLineDiagnostic(result.stderr), `${command}: ${result.stderr}`).toBe(true);
    expect(result.stderr, command).toMatch(pattern);
    expect(result.stdout, command).toBe('');
  }
}

/** Every table, index and sequence of the schema, and the migration ledger: "unchanged" is equality. */
async function schemaState(
  schema: string,
): Promise<{ relations: string[]; migrations: number[]; namespaces: string[] }> {
  const relations = await admin.query<{ name: string }>(
    `SELECT c.relname || ':' || c.relkind::text AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 ORDER BY 1`,
    [schema],
  );
  const names = relations.rows.map((r) => r.name);
  const has = (table: string) => names.includes(`${table}:r`);
  const applied = has('schema_migrations')
    ? (await admin.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY 1`)).rows
    : [];
  const namespaces = has('namespaces')
    ? (await admin.query<{ namespace: string }>(`SELECT namespace FROM ${schema}.namespaces ORDER BY 1`)).rows
    : [];
  return {
    relations: names,
    migrations: applied.map((r) => r.version),
    namespaces: namespaces.map((r) => r.namespace),
  };
}

beforeAll(async () => {
  requireBuild();
  await admin.connect();
});

afterAll(async () => {
  await schemas.dropAll();
  await admin.end();
});

describe('read-only commands (inspect, export, explain, balances, tui)', () => {
  it('refuse an unknown namespace in one line and register nothing', async () => {
    const schema = await freshSchema();
    const url = urlForSchema(schema);
    await (await Database.open(url, 'amends-test read-only migrate')).close();
    const { path, namespace } = unknownManifest();
    const before = await schemaState(schema);
    expect(before.migrations).toEqual(migrations.map((m) => m.version));

    const runs = await everyReadOnlyCommand(path, url);
    expectOneLineRefusals(
      runs,
      new RegExp(
        `namespace ${namespace} is not registered in the database .*: amends(ctl)? \\w+ registers nothing; amends worker or amendsctl source-load`,
      ),
    );
    expect(await schemaState(schema)).toEqual(before);
    expect(before.namespaces).toEqual([]);

    // The shared database a user points at: the namespace is still unknown there too.
    const shared = await runAmendsctl(['inspect', '--manifest', path], {
      AMENDS_DATABASE_URL: testDatabaseUrl,
      AMENDS_BROKERS: testBrokers,
    });
    expect(shared.code, shared.stderr).toBe(1);
    const rows = await admin.query('SELECT 1 FROM namespaces WHERE namespace = $1', [namespace]);
    expect(rows.rowCount).toBe(0);
  });

  it('create no schema in a database that has none, and say what does', async () => {
    const schema = await freshSchema();
    const { path } = unknownManifest();
    const runs = await everyReadOnlyCommand(path, urlForSchema(schema));
    expectOneLineRefusals(
      runs,
      /has no amends schema yet: run amendsctl migrate first \(amends worker, relay, view and amendsctl source-load also migrate unless started with --no-migrate; inspect, export, explain, balances and tui never change the database\)/,
    );
    expect((await schemaState(schema)).relations).toEqual([]);
  });

  it('do not migrate a schema older than their migrations', async () => {
    const schema = await freshSchema();
    const url = urlForSchema(schema);
    // The schema as an older amends left it: every migration but the last.
    const old = new pg.Client({ connectionString: url });
    await old.connect();
    try {
      await applyMigrations(old, { through: migrations.length - 1 });
    } finally {
      await old.end();
    }
    const last = migrations[migrations.length - 1];
    const before = await schemaState(schema);
    expect(before.migrations).toEqual(migrations.slice(0, -1).map((m) => m.version));

    const { path } = unknownManifest();
    const runs = await everyReadOnlyCommand(path, url);
    expectOneLineRefusals(
      runs,
      new RegExp(`lacks schema migration ${last?.version} \\(${last?.name}\\).*: run amendsctl migrate first`),
    );
    expect(await schemaState(schema)).toEqual(before);
  });
});
