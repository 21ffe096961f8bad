/**
 * `amendsctl migrate` as the explicit upgrade step, and `--no-migrate` (issue 35, item 1): the
 * command applies what is pending and says what, once; a worker, relay, view or source-load
 * started with `--no-migrate` on an older schema refuses in one line naming the command and changes
 * nothing. Each case in a fresh schema of its own (search_path through the URL), dropped
 * afterwards.
 */
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations, migrations } from '../../src/io/store/migrations.js';
import { isOneLineDiagnostic, repoRoot, requireBuild, runAmendsctl, runChild } from '../support/amendsctl-process.js';
import { manifestFor } from '../support/bound-namespace-rows.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';
import { createSource, scratchFile } from '../support/worker-process.js';

const admin = new pg.Client({ connectionString: testDatabaseUrl });
const schemas = new TestSchemas(admin, 'amends_test_migrate');
const latest = migrations.length;
const topics = new Set<string>();

async function appliedIn(schema: string): Promise<number[]> {
  const found = await admin.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [
    `${schema}.schema_migrations`,
  ]);
  if (!found.rows[0]?.t) return [];
  const rows = await admin.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY 1`);
  return rows.rows.map((r) => r.version);
}

/** A schema as the previous amends left it: every migration but the last. */
async function previousSchema(): Promise<{ schema: string; url: string }> {
  const schema = await schemas.fresh();
  const url = urlForSchema(schema);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await applyMigrations(client, { through: latest - 1 });
  } finally {
    await client.end();
  }
  return { schema, url };
}

beforeAll(async () => {
  requireBuild();
  await admin.connect();
});

afterAll(async () => {
  await deleteTestTopics(topics);
  await schemas.dropAll();
  await admin.end();
});

describe('amendsctl migrate', () => {
  it('applies every migration to an empty schema, says which, and then has nothing to do', async () => {
    const schema = await schemas.fresh();
    const env = { AMENDS_DATABASE_URL: urlForSchema(schema) };
    const first = await runAmendsctl(['migrate'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      new RegExp(
        `^amendsctl migrate: applied 1 \\(namespaces\\), 2 \\(worker_store\\), .*, ${latest} \\(\\w+\\) to .+ \\(schema ${schema}\\); schema version ${latest}\n$`,
      ),
    );
    expect(await appliedIn(schema)).toEqual(migrations.map((m) => m.version));
    const again = await runAmendsctl(['migrate', '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ applied: [], version: latest });
  });

  it('brings the previous schema up to this build and names the migration in --json', async () => {
    const { schema, url } = await previousSchema();
    const result = await runAmendsctl(['migrate', '--json'], { AMENDS_DATABASE_URL: url });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      applied: [{ version: latest, name: migrations[latest - 1]?.name }],
      version: latest,
    });
    expect(await appliedIn(schema)).toEqual(migrations.map((m) => m.version));
  });
});

describe('--no-migrate', () => {
  it('worker, relay and view refuse the previous schema in one line naming amendsctl migrate, and change nothing', async () => {
    const { schema, url } = await previousSchema();
    const namespace = testName();
    const manifest = scratchFile(`${namespace}.manifest.json`, JSON.stringify(manifestFor(namespace)));
    const env = { PATH: process.env.PATH ?? '', AMENDS_DATABASE_URL: url, AMENDS_BROKERS: testBrokers };
    for (const role of ['worker', 'relay', 'view']) {
      const args = [join(repoRoot, 'bin/amends'), role, '--manifest', manifest, '--no-migrate'];
      const result = await runChild(process.execPath, args, { env, timeoutMs: 30_000, label: `amends ${role}` });
      expect(result.code, `${role}: ${result.stderr}`).toBe(1);
      expect(isOneLineDiagnostic(result.stderr), `${role}: ${result.stderr}`).toBe(true);
      expect(result.stderr, role).toContain(
        `lacks schema migration ${latest} (${migrations[latest - 1]?.name}) of this amends`,
      );
      expect(result.stderr, role).toContain('run amendsctl migrate first');
    }
    expect(await appliedIn(schema)).toEqual(migrations.slice(0, -1).map((m) => m.version));
    const registered = await admin.query(`SELECT 1 FROM ${schema}.namespaces WHERE namespace = $1`, [namespace]);
    expect(registered.rowCount).toBe(0);
  });

  it('source-load refuses it too, before it publishes anything', async () => {
    const { schema, url } = await previousSchema();
    const source = await createSource(topics);
    const env = { PATH: process.env.PATH ?? '', AMENDS_DATABASE_URL: url, AMENDS_BROKERS: testBrokers };
    const args = ['source-load', '--manifest', source.manifestPath, '--file', 'fixtures/before.jsonl', '--no-migrate'];
    const result = await runAmendsctl(args, env);
    expect(result.code, result.stderr).toBe(1);
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toContain(
      `lacks schema migration ${latest} (${migrations[latest - 1]?.name}) of this amends`,
    );
    expect(result.stdout).toBe('');
    expect(await appliedIn(schema)).toEqual(migrations.slice(0, -1).map((m) => m.version));
  });
});
