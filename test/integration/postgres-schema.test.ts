/**
 * Migrations, the namespace registry and the relay's outbox read against the real PostgreSQL.
 * Migration tests run in a fresh schema of their own (search_path through the URL's
 * `options`), dropped afterwards.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configDigest, type Manifest } from '../../src/domain/config.js';
import { readNamespace, registerNamespace } from '../../src/io/namespace-registry.js';
import { pendingOutboxRowsSql, relayBatchRowsMax } from '../../src/io/outbox-relay.js';
import { Database } from '../../src/io/postgres.js';
import { migrationLockKey, migrations } from '../../src/store/migrations.js';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';

const admin = new pg.Client({ connectionString: testDatabaseUrl });

const schemas = new TestSchemas(admin, 'amends_test');
const freshSchema = () => schemas.fresh();

function manifestFor(namespace: string, origin = '2026-03-01'): Manifest {
  return {
    source_topic: `${namespace}-topic`,
    config: {
      namespace,
      schema_version: 1,
      ledger_origin: origin,
      partitions: 2,
      stock_keys: [{ item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 }],
      source_incarnation: `kafka:${'ab'.repeat(16)}`,
    },
  };
}

/** Opens a Database (which migrates) in a separate Node process; resolves with its exit code. */
function migrateInChildProcess(url: string): Promise<{ code: number | null; stderr: string }> {
  const postgresModule = join(repoRoot, 'dist/io/postgres.js');
  const script = `const { Database } = await import(${JSON.stringify(postgresModule)});
const db = await Database.open(process.env.URL, 'amends-test migrate pid ' + process.pid);
await db.close();`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH ?? '', URL: url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

async function waitingOnMigrationLock(): Promise<number> {
  const key = BigInt.asUintN(64, migrationLockKey);
  const result = await admin.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_locks
      WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
        AND classid = $1::bigint::oid AND objid = $2::bigint::oid`,
    [(key >> 32n).toString(), (key & 0xffffffffn).toString()],
  );
  return Number(result.rows[0]!.n);
}

beforeAll(async () => {
  requireBuild();
  await admin.connect();
});
afterAll(async () => {
  await schemas.dropAll();
  await admin.end();
});

describe('schema migrations', () => {
  it('two processes migrating a fresh schema at once both succeed, each version applied once', async () => {
    const schema = await freshSchema();
    const url = urlForSchema(schema);
    // Hold the migration lock so both processes are provably inside their transactions at once.
    const blocker = new pg.Client({ connectionString: testDatabaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT pg_advisory_xact_lock($1::int8)', [migrationLockKey.toString()]);
      const both = Promise.all([migrateInChildProcess(url), migrateInChildProcess(url)]);
      const deadline = Date.now() + 10_000;
      while ((await waitingOnMigrationLock()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await waitingOnMigrationLock()).toBe(2);
      await blocker.query('COMMIT');
      const results = await both;
      expect(results).toEqual([
        { code: 0, stderr: '' },
        { code: 0, stderr: '' },
      ]);
    } finally {
      await blocker.end();
    }
    const applied = await admin.query<{ version: number; name: string }>(
      `SELECT version, name FROM ${schema}.schema_migrations ORDER BY version`,
    );
    expect(applied.rows).toEqual(migrations.map((m) => ({ version: m.version, name: m.name })));
    const tables = await admin.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [schema],
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual([
      'authority',
      'decisions',
      'namespaces',
      'outbox',
      'output_bindings',
      'output_days',
      'output_versions',
      'partitions',
      'quarantine',
      'schema_migrations',
      'view_partitions',
      'view_rows',
      'worker_heartbeats',
    ]);
  });

  it('refuses a database whose schema is newer than this build knows', async () => {
    const schema = await freshSchema();
    const url = urlForSchema(schema);
    const db = await Database.open(url, 'amends-test newer-schema');
    await db.close();
    await admin.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, 'from_the_future')`, [
      migrations.length + 1,
    ]);
    await expect(Database.open(url, 'amends-test newer-schema')).rejects.toThrow(/newer than this amends knows/);
  });
});

describe('namespace registry', () => {
  it('registers once, accepts the same digest, refuses a different one naming both digests', async () => {
    const db = await Database.open(testDatabaseUrl, 'amends-test registry');
    try {
      const namespace = testName();
      const manifest = manifestFor(namespace);
      expect(await registerNamespace(db.pool, manifest)).toBe('registered');
      expect(await registerNamespace(db.pool, manifest)).toBe('unchanged');

      const row = await readNamespace(db.pool, namespace);
      expect(row).toMatchObject({
        namespace,
        sourceTopic: manifest.source_topic,
        sourceIncarnation: manifest.config.source_incarnation,
        config: manifest.config,
        configDigest: configDigest(manifest.config),
      });

      const changed = manifestFor(namespace, '2026-03-02');
      const refusal = registerNamespace(db.pool, changed);
      await expect(refusal).rejects.toThrow(configDigest(manifest.config));
      await expect(registerNamespace(db.pool, changed)).rejects.toThrow(configDigest(changed.config));
      await expect(registerNamespace(db.pool, { ...manifest, source_topic: 'elsewhere' })).rejects.toThrow(
        /registered for source topic/,
      );
    } finally {
      await db.close();
    }
  });

  it('two concurrent first registrations of one manifest both succeed', async () => {
    const [a, b] = await Promise.all([
      Database.open(testDatabaseUrl, 'amends-test registry a'),
      Database.open(testDatabaseUrl, 'amends-test registry b'),
    ]);
    try {
      const manifest = manifestFor(testName());
      const outcomes = await Promise.all([registerNamespace(a.pool, manifest), registerNamespace(b.pool, manifest)]);
      expect(outcomes.sort()).toEqual(['registered', 'unchanged']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('starts every session with bounded lock, idle-transaction and statement timeouts and a process name', async () => {
    const db = await Database.open(testDatabaseUrl, 'amends-test settings');
    try {
      const result = await db.pool.query<Record<string, string>>(
        `SELECT current_setting('lock_timeout') AS lock, current_setting('idle_in_transaction_session_timeout') AS idle,
                current_setting('statement_timeout') AS statement, current_setting('application_name') AS app`,
      );
      expect(result.rows[0]).toEqual({ lock: '5s', idle: '10s', statement: '5s', app: 'amends-test settings' });
    } finally {
      await db.close();
    }
  });
});

describe('the outbox', () => {
  it("the relay's read of one namespace's pending envelopes filters out no other row, however many the table holds", async () => {
    // Seen in the benchmark: 800,000 envelopes of other namespaces (and the published ones of
    // its own) made the planner walk the primary key and filter them all, 425 ms per batch.
    // Envelopes of the benchmark's size (~250 bytes), others' first in id order, as there.
    const schema = await freshSchema();
    const db = await Database.open(urlForSchema(schema), 'amends-test outbox plan');
    try {
      await db.pool.query(
        `INSERT INTO outbox (namespace, partition, item, location, day, version, record_key, record_value, published_at)
         SELECT CASE WHEN i <= 150000 THEN 'other' ELSE 'mine' END, i % 2, 'widget', 'berlin', 'd' || i, 1, '\\x00', convert_to(repeat('v', 250), 'UTF8'),
                CASE WHEN i <= 150000 OR i > 180000 THEN NULL ELSE now() END
           FROM generate_series(1, 186000) AS i`,
      );
      await db.pool.query('ANALYZE outbox');
      const explained = await db.pool.query<{ 'QUERY PLAN': unknown }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${pendingOutboxRowsSql}`,
        ['mine', relayBatchRowsMax],
      );
      const plan = JSON.stringify(explained.rows[0]!['QUERY PLAN']);
      expect(plan).toContain('"Index Name":"outbox_pending"');
      expect(plan).not.toMatch(/"Rows Removed by Filter":[1-9]/);
      const rows = await db.pool.query<{ id: string }>(pendingOutboxRowsSql, ['mine', relayBatchRowsMax]);
      expect(rows.rows.length).toBe(relayBatchRowsMax);
    } finally {
      await db.close();
    }
  });
});
