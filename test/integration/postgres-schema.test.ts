/**
 * Migrations, the namespace registry and the relay's outbox read against the real PostgreSQL.
 * Migration tests run in a fresh schema of their own (search_path through the URL's
 * `options`), dropped afterwards.
 */

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configDigest } from '../../src/domain/config.js';
import { applyMigrations, migrationLockKey, migrations } from '../../src/io/store/migrations.js';
import { namespaceId, readNamespace, registerNamespace } from '../../src/io/store/namespace-registry.js';
import { Database } from '../../src/io/store/postgres.js';
import { pendingOutboxCountSql, pendingOutboxRowsSql, relayBatchRowsMax } from '../../src/io/transport/outbox-relay.js';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';
import { fillUnbounded, manifestFor, registerBoundNamespace } from '../support/bound-namespace-rows.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import { ledgerRows, type PerRecordTable, perRecordTables } from '../support/ledger-rows.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';

const admin = new pg.Client({ connectionString: testDatabaseUrl });

const schemas = new TestSchemas(admin, 'amends_test');
const freshSchema = () => schemas.fresh();

/** Opens a Database (which migrates) in a separate Node process; resolves with its exit code. */
function migrateInChildProcess(url: string): Promise<{ code: number | null; stderr: string }> {
  const postgresModule = join(repoRoot, 'dist/io/store/postgres.js');
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
      while ((await waitingOnMigrationLock()) < 2 && Date.now() < deadline) await sleep(50);
      expect(await waitingOnMigrationLock(), 'both migrations waiting on the lock within 10 s').toBe(2);
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
      'config_revisions',
      'decisions',
      'namespaces',
      'outbox',
      'output_bindings',
      'output_days',
      'output_versions',
      'partitions',
      'quarantine',
      'relay_partitions',
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

/** A few rows of `namespace` in every per-record table, as the schema-5 build keyed them (by text). */
async function schema5Rows(client: pg.ClientBase, namespace: string): Promise<void> {
  const bytes = (s: string) => Buffer.from(s, 'utf8');
  await client.query(
    `INSERT INTO decisions (namespace, partition, record_offset, outcome, item, location, txn, rev, raw_key, raw_value,
                            quarantined, detail, epoch)
     VALUES ($1, 0, 0, 'APPLIED', 'widget', 'berlin', 'T1', 1, $2, $3, false, NULL, 1),
            ($1, 0, 1, 'CONFLICT', 'widget', 'berlin', 'T1', 1, $2, $3, true, 'differs', 1),
            ($1, 1, 0, 'MALFORMED', NULL, NULL, NULL, NULL, NULL, '', true, 'not JSON', 2)`,
    [namespace, bytes('{"item":"widget"}'), bytes('{"txn":"T1"}')],
  );
  await client.query(
    `INSERT INTO authority (namespace, item, location, txn, rev, op, day, qty, cause_partition, cause_offset)
     VALUES ($1, 'widget', 'berlin', 'T1', 1, 'post', '2026-03-02', 5, 0, 0),
            ($1, 'widget', 'berlin', 'T2', 2, 'cancel', NULL, NULL, 0, 3)`,
    [namespace],
  );
  await client.query(
    `INSERT INTO output_versions (namespace, item, location, day, version, closing, status, retracted, cause_partition,
                                  cause_offset)
     VALUES ($1, 'widget', 'berlin', '2026-03-02', 1, 105, 'OK', false, 0, 0),
            ($1, 'widget', 'berlin', '2026-03-03', 2, NULL, NULL, true, 0, 3)`,
    [namespace],
  );
  await client.query(
    `INSERT INTO output_days (namespace, item, location, day, version, closing, status, retracted, cause_partition,
                              cause_offset, qty, posts)
     VALUES ($1, 'widget', 'berlin', '2026-03-02', 1, 105, 'OK', false, 0, 0, 5, 1),
            ($1, 'widget', 'berlin', '2026-03-03', 2, NULL, NULL, true, 0, 3, 0, 0)`,
    [namespace],
  );
  await client.query(
    `INSERT INTO outbox (namespace, partition, item, location, day, version, record_key, record_value, published_at)
     VALUES ($1, 0, 'widget', 'berlin', '2026-03-02', 1, $2, $3, now()),
            ($1, 0, 'widget', 'berlin', '2026-03-03', 2, $2, $3, NULL)`,
    [namespace, bytes('k'), bytes('v')],
  );
  await client.query(
    `INSERT INTO output_bindings (namespace, output_topic, incarnation, partitions)
     VALUES ($1, $1 || '-out', 'kafka:' || md5($1), 2)`,
    [namespace],
  );
  await client.query(
    `INSERT INTO view_rows (namespace, item, location, day, version, closing, status, retracted, cause_partition,
                            cause_offset, record_value, topic_partition, topic_offset, applied_at)
     VALUES ($1, 'widget', 'berlin', '2026-03-02', 1, 105, 'OK', false, 0, 0, $2, 0, 0, now())`,
    [namespace, bytes('v')],
  );
}

describe('migration 0006: namespace ids', () => {
  const allTables = Object.keys(perRecordTables) as PerRecordTable[];

  it('keys every per-record row by its namespace id in place, and rebuilds each index on it', async () => {
    const client = new pg.Client({ connectionString: urlForSchema(await freshSchema()) });
    await client.connect();
    try {
      expect(await applyMigrations(client, { through: 5 })).toEqual([1, 2, 3, 4, 5]);
      const namespaces = ['short', 'bench-scale-20261203t153027-1mvg-abc'];
      for (const namespace of namespaces) {
        await registerNamespace(client, manifestFor(namespace));
        await schema5Rows(client, namespace);
      }
      const before = await Promise.all(namespaces.map((n) => ledgerRows(client, n, allTables)));
      const quarantine = 'SELECT * FROM quarantine ORDER BY namespace, partition, record_offset';
      const quarantineBefore = (await client.query(quarantine)).rows;

      expect(await applyMigrations(client, { through: 6 })).toEqual([6]);
      const ids = await client.query('SELECT namespace, id FROM namespaces ORDER BY id');
      expect(ids.rows.map((r) => r.id).sort()).toEqual([1, 2]);
      expect(await Promise.all(namespaces.map((n) => ledgerRows(client, n, allTables)))).toEqual(before);
      expect(before.flat()).toHaveLength(2 * 12);
      expect((await client.query(quarantine)).rows).toEqual(quarantineBefore);

      const columns = await client.query(
        `SELECT table_name, data_type, is_nullable FROM information_schema.columns
          WHERE table_schema = current_schema() AND column_name IN ('ns', 'namespace') AND table_name = ANY($1)
          ORDER BY table_name`,
        [allTables],
      );
      expect(columns.rows).toEqual(
        [...allTables].sort().map((t) => ({ table_name: t, data_type: 'integer', is_nullable: 'NO' })),
      );
      const indexes = await client.query(
        `SELECT indexname, regexp_replace(indexdef, '^.* USING ', '') AS def FROM pg_indexes
          WHERE schemaname = current_schema() AND tablename = ANY($1) ORDER BY indexname`,
        [allTables],
      );
      expect(Object.fromEntries(indexes.rows.map((r) => [r.indexname, r.def]))).toEqual({
        authority_pkey: 'btree (ns, item, location, txn)',
        decisions_pkey: 'btree (ns, partition, record_offset)',
        decisions_quarantined: 'btree (ns, partition, record_offset) WHERE quarantined',
        outbox_one_per_version: 'btree (ns, item, location, day, version)',
        outbox_pending: 'btree (ns, ((id + 0))) WHERE (published_at IS NULL)',
        outbox_pkey: 'btree (id)',
        output_days_pkey: 'btree (ns, item, location, day)',
        output_days_shown: 'btree (ns, item, location, day) WHERE (NOT retracted)',
        output_versions_pkey: 'btree (ns, item, location, day, version)',
        view_rows_pkey: 'btree (ns, item, location, day)',
      });
      // No foreign key on the per-record tables (migration 0002 says why).
      const foreign = await client.query(
        `SELECT conrelid::regclass::text AS t FROM pg_constraint
          WHERE contype = 'f' AND connamespace = current_schema()::regnamespace AND conrelid::regclass::text = ANY($1)`,
        [allTables],
      );
      expect(foreign.rows).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it('refuses a row of an unregistered namespace and changes nothing', async () => {
    const client = new pg.Client({ connectionString: urlForSchema(await freshSchema()) });
    await client.connect();
    try {
      await applyMigrations(client, { through: 5 });
      await client.query(
        `INSERT INTO authority (namespace, item, location, txn, rev, op, day, qty, cause_partition, cause_offset)
         VALUES ('nobody', 'widget', 'berlin', 'T1', 1, 'post', '2026-03-02', 5, 0, 0)`,
      );
      await expect(applyMigrations(client)).rejects.toThrow(/a row of namespace nobody, which is not registered/);
      const applied = await client.query('SELECT max(version) AS v FROM schema_migrations');
      expect(applied.rows[0].v).toBe(5);
      const rows = await client.query('SELECT namespace FROM authority');
      expect(rows.rows).toEqual([{ namespace: 'nobody' }]);
    } finally {
      await client.end();
    }
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
      const others = await registerBoundNamespace(db.pool, 'others');
      const mine = await registerBoundNamespace(db.pool, 'mine');
      // Test setup, not a statement of amends: on a loaded machine its 186,000 rows took longer
      // than the 5 s statement_timeout every amends session carries (seen beside a parallel build).
      await fillUnbounded(db.pool, [
        [
          `INSERT INTO output_versions (ns, item, location, day, version, closing, status, retracted, cause_partition,
                                        cause_offset, record_key, record_value)
           SELECT CASE WHEN i <= 150000 THEN $1::int ELSE $2::int END, 'widget', 'berlin',
                  to_char(date '2000-01-01' + i, 'YYYY-MM-DD'), 1, 100, 'OK', false,
                  i % 2, i, '\\x00', convert_to(repeat('v', 250), 'UTF8')
             FROM generate_series(1, 186000) AS i ORDER BY i`,
          [others, mine],
        ],
      ]);
      // Mine published through id 180,000 on both partitions: 6,000 pending.
      await db.pool.query(
        `UPDATE relay_partitions r SET published_through = (SELECT max(id) FROM output_versions
            WHERE ns = $2 AND cause_partition = r.partition AND id <= 180000) WHERE namespace = $1`,
        ['mine', mine],
      );
      await db.pool.query('ANALYZE output_versions');
      const values = [mine, relayBatchRowsMax, 'mine'];
      const explained = await db.pool.query<{ 'QUERY PLAN': unknown }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${pendingOutboxRowsSql}`,
        values,
      );
      // Every step into the versions is a range of the relay's index, none filters a row out.
      const steps: Record<string, unknown>[] = [];
      const walk = (node: Record<string, unknown>) => {
        if (node['Relation Name'] === 'output_versions') steps.push(node);
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      walk((explained.rows[0]!['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan);
      expect(steps.map((n) => [n['Node Type'], n['Index Name'], n['Rows Removed by Filter'] ?? 0])).toEqual([
        ['Index Scan', 'output_versions_outbox_order', 0],
      ]);
      const rows = await db.pool.query<{ id: string }>(pendingOutboxRowsSql, values);
      const ids = rows.rows.map((r) => Number(r.id));
      const firstId = Number((await db.pool.query('SELECT min(id) AS m FROM output_versions')).rows[0].m);
      expect(ids).toEqual(Array.from({ length: relayBatchRowsMax }, (_, k) => firstId + 180_000 + k));
      const pending = await db.pool.query(pendingOutboxCountSql, ['mine']);
      expect(Number(pending.rows[0].n)).toBe(6_000);
    } finally {
      await db.close();
    }
  });
});

describe('migration 0007: the outbox in the output versions', () => {
  /** Schema 6 with schema5Rows for two namespaces: the second has every envelope published. */
  async function schema6(client: pg.ClientBase): Promise<[number, number]> {
    expect(await applyMigrations(client, { through: 5 })).toEqual([1, 2, 3, 4, 5]);
    for (const namespace of ['first', 'second']) {
      await registerNamespace(client, manifestFor(namespace));
      await schema5Rows(client, namespace);
    }
    expect(await applyMigrations(client, { through: 6 })).toEqual([6]);
    const ids: [number, number] = [await namespaceId(client, 'first'), await namespaceId(client, 'second')];
    await client.query('UPDATE outbox SET published_at = now() WHERE ns = $1', [ids[1]]);
    return ids;
  }
  const envelopes = 'SELECT id, ns, partition, record_key, record_value FROM outbox ORDER BY id';

  it('moves every envelope into its version, turns what was published into relay cursors, keeps the ids', async () => {
    const client = new pg.Client({ connectionString: urlForSchema(await freshSchema()) });
    await client.connect();
    try {
      const [first, second] = await schema6(client);
      const tables = ['output_versions', 'outbox'] as PerRecordTable[];
      const before = await Promise.all(['first', 'second'].map((n) => ledgerRows(client, n, tables)));
      const envelopesBefore = (await client.query(envelopes)).rows;
      expect(envelopesBefore).toHaveLength(4);

      expect(await applyMigrations(client, { through: 7 })).toEqual([7]);
      expect(await Promise.all(['first', 'second'].map((n) => ledgerRows(client, n, tables)))).toEqual(before);
      expect((await client.query(envelopes)).rows).toEqual(envelopesBefore);
      const ids = (ns: number) => envelopesBefore.filter((e) => e.ns === ns).map((e) => Number(e.id));
      const cursors = await client.query(
        'SELECT namespace, partition, published_through FROM relay_partitions ORDER BY namespace, partition',
      );
      // First: its first envelope published, its second not; second: both. Partition 1 has none.
      expect(cursors.rows.map((r) => [r.namespace, r.partition, Number(r.published_through)])).toEqual([
        ['first', 0, ids(first)[0]],
        ['first', 1, 0],
        ['second', 0, ids(second)[1]],
        ['second', 1, 0],
      ]);
      const published = await client.query('SELECT ns, published FROM outbox ORDER BY id');
      expect(published.rows).toEqual([
        { ns: first, published: true },
        { ns: first, published: false },
        { ns: second, published: true },
        { ns: second, published: true },
      ]);
      // A new version draws its id after every old one.
      const next = await client.query(
        `INSERT INTO output_versions (ns, item, location, day, version, closing, status, retracted, cause_partition,
                                      cause_offset, record_key, record_value)
         VALUES ($1, 'widget', 'berlin', '2026-03-04', 1, 1, 'LOW', false, 0, 9, '\\x00', '\\x01') RETURNING id`,
        [first],
      );
      expect(Number(next.rows[0].id)).toBeGreaterThan(Math.max(...envelopesBefore.map((e) => Number(e.id))));
      const indexes = await client.query(
        `SELECT indexname, regexp_replace(indexdef, '^.* USING ', '') AS def FROM pg_indexes
          WHERE schemaname = current_schema() AND tablename = 'output_versions' ORDER BY indexname`,
      );
      expect(Object.fromEntries(indexes.rows.map((r) => [r.indexname, r.def]))).toEqual({
        output_versions_outbox_order: 'btree (ns, cause_partition, id)',
        output_versions_pkey: 'btree (ns, item, location, day, version)',
      });
    } finally {
      await client.end();
    }
  });

  it('refuses an output version without its envelope and changes nothing', async () => {
    const client = new pg.Client({ connectionString: urlForSchema(await freshSchema()) });
    await client.connect();
    try {
      const [first] = await schema6(client);
      await client.query(`DELETE FROM outbox WHERE id = (SELECT max(id) FROM outbox WHERE ns = $1)`, [first]);
      const before = (await client.query(envelopes)).rows;
      await expect(applyMigrations(client)).rejects.toThrow(/an output version without its outbox envelope/);
      const applied = await client.query('SELECT max(version) AS v FROM schema_migrations');
      expect(applied.rows[0].v).toBe(6);
      expect((await client.query(envelopes)).rows).toEqual(before);
    } finally {
      await client.end();
    }
  });
});
