/**
 * Users' data survives the schema upgrade (migration 0005, day totals): a database written
 * as the schema-4 build wrote it (its migrations, its batch statement: store-v4-writer.ts)
 * over a real source topic is opened by this build, which converts it in place. Then:
 * every row the old build wrote is unchanged, `verify` PASSes, `export` equals `simulate`
 * byte for byte, and a worker of this build goes on deciding on the converted rows (a
 * correction of the first day re-versions every later day) and `verify` PASSes again.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/domain/config.js';
import { fillerLines } from '../../src/domain/filler-load.js';
import type { LedgerState } from '../../src/domain/ledger-state.js';
import { parseSimulationInput } from '../../src/domain/simulation-input.js';
import { registerNamespace } from '../../src/io/namespace-registry.js';
import { Database } from '../../src/io/postgres.js';
import { applyMigrations } from '../../src/store/migrations.js';
import { requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testDatabaseUrl } from '../support/endpoints.js';
import { allStories, twoKeysConfig } from '../support/fixture-stories.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { writeAsSchemaV4 } from '../support/store-v4-writer.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';
import {
  createSource,
  loadFile,
  mergeEnds,
  StoreProbe,
  scratchFile,
  startWorker,
  stopAllWorkers,
  type TestSource,
  workerEnv,
} from '../support/worker-process.js';

const topics = new Set<string>();
const admin = new pg.Client({ connectionString: testDatabaseUrl });
const schemas = new TestSchemas(admin, 'amends_test_upgrade');
let schemaUrl: string;
let env: Record<string, string>;
let probe: StoreProbe;

/** Every row the old build wrote, in a fixed order, as text: what an upgrade must not change. */
async function ledgerRows(client: pg.ClientBase, namespace: string): Promise<string[]> {
  const tables: [string, string][] = [
    ['decisions', 'partition, record_offset'],
    ['authority', 'item, location, txn'],
    ['output_versions', 'item, location, day, version'],
    ['outbox', 'id'],
  ];
  const out: string[] = [];
  for (const [table, order] of tables) {
    const { rows } = await client.query(
      `SELECT to_jsonb(t) - 'decided_at' - 'created_at' AS r FROM ${table} t WHERE namespace = $1 ORDER BY ${order}`,
      [namespace],
    );
    out.push(...rows.map((r) => `${table} ${JSON.stringify(r.r)}`));
  }
  return out;
}

/** The four stories and 300 filler records per key (corrections, redeliveries, cancels among them). */
function storyText(): string {
  const filler = (item: string, location: string, stage: string) =>
    fillerLines({ item, location, stage, count: 300, firstDay: '2026-04-01' })
      .map((l) => JSON.stringify(l))
      .join('\n');
  return `${allStories()}${filler('widget', 'berlin', 'u1')}\n${filler('gadget', 'paris', 'u1')}\n`;
}

async function exportedAndSimulated(
  source: TestSource,
  file: string,
): Promise<{ exported: string; simulated: string }> {
  const run = async (args: string[]) => {
    const r = await runAmendsctl(args, env);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };
  const m = source.manifestPath;
  const [decisions, outputs, simulated] = await Promise.all([
    run(['export', '--manifest', m, '--what', 'decisions']),
    run(['export', '--manifest', m, '--what', 'outputs']),
    run(['simulate', '--manifest', m, '--file', file]),
  ]);
  return { exported: decisions + outputs, simulated };
}

async function verifyPasses(source: TestSource): Promise<void> {
  const r = await runAmendsctl(['verify', '--manifest', source.manifestPath, '--json'], env);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'PASS', differences: [] });
}

beforeAll(async () => {
  requireBuild();
  await admin.connect();
  schemaUrl = urlForSchema(await schemas.fresh());
  env = { ...workerEnv, AMENDS_DATABASE_URL: schemaUrl };
  probe = new StoreProbe(schemaUrl);
});
afterAll(async () => {
  await stopAllWorkers();
  await probe.close();
  await schemas.dropAll();
  await admin.end();
  await deleteTestTopics(topics);
});

describe('upgrading a database written by the schema-4 build', () => {
  it('converts it in place: rows unchanged, verify PASS, export = simulate, and workers go on', async () => {
    const source = await createSource(topics, twoKeysConfig);
    const manifest = JSON.parse(readFileSync(source.manifestPath, 'utf8')) as Manifest;
    const first = scratchFile(`${source.topic}.first.jsonl`, storyText());
    const ends = await loadFile(source, first);

    // The schema-4 database: its four migrations, the namespace, every record decided by its statement.
    const old = new pg.Client({ connectionString: schemaUrl });
    await old.connect();
    try {
      expect(await applyMigrations(old, { through: 4 })).toEqual([1, 2, 3, 4]);
      await registerNamespace(old, manifest);
      const records = parseSimulationInput(readFileSync(first, 'utf8'), manifest.config);
      const state: LedgerState = new Map();
      for (const partition of [0, 1]) {
        const own = records.filter((r) => r.partition === partition);
        const batches = Array.from({ length: Math.ceil(own.length / 50) }, (_, i) => own.slice(i * 50, i * 50 + 50));
        expect(await writeAsSchemaV4(old, manifest.config, partition, batches, state)).toBe(ends.get(partition));
      }
      const before = await ledgerRows(old, source.namespace);
      expect(before.length).toBeGreaterThan(600);

      // This build opens it: migration 5 converts it.
      const db = await Database.open(schemaUrl, 'amends-test upgrade');
      try {
        const applied = await db.pool.query('SELECT version FROM schema_migrations ORDER BY version');
        expect(applied.rows.map((r) => r.version)).toEqual([1, 2, 3, 4, 5]);
        expect(await ledgerRows(old, source.namespace)).toEqual(before);
        // Each day's total is its authoritative posts' sum and count.
        const { rows } = await db.pool.query(
          `SELECT count(*)::int AS n FROM output_days o
             LEFT JOIN LATERAL (
                  SELECT coalesce(sum(a.qty), 0)::bigint AS qty, count(*)::int AS posts FROM authority a
                   WHERE a.namespace = o.namespace AND a.item = o.item AND a.location = o.location
                     AND a.day = o.day AND a.op = 'post') AS t ON true
            WHERE o.namespace = $1 AND (o.qty <> t.qty OR o.posts <> t.posts)`,
          [source.namespace],
        );
        expect(rows[0].n).toBe(0);
      } finally {
        await db.close();
      }
    } finally {
      await old.end();
    }
    await verifyPasses(source);
    const firstRun = await exportedAndSimulated(source, first);
    expect(firstRun.exported.split('\n').length).toBeGreaterThan(1_000);
    expect(firstRun.exported).toBe(firstRun.simulated);

    // A worker of this build decides on: a correction of the first filler day and a new post.
    const more = [
      {
        key: { item: 'widget', location: 'berlin' },
        value: {
          schema: 1,
          txn: 'Fu1-0',
          rev: 5,
          op: 'post',
          item: 'widget',
          location: 'berlin',
          day: '2026-04-01',
          qty: 3,
        },
      },
      {
        key: { item: 'gadget', location: 'paris' },
        value: {
          schema: 1,
          txn: 'U-new',
          rev: 1,
          op: 'post',
          item: 'gadget',
          location: 'paris',
          day: '2027-06-01',
          qty: 4,
        },
      },
    ];
    const second = scratchFile(`${source.topic}.second.jsonl`, `${more.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const allEnds = mergeEnds(ends, await loadFile(source, second));
    startWorker({ manifestPath: source.manifestPath, env });
    await probe.waitForFrontiers(source.namespace, allEnds);
    await stopAllWorkers();
    const everything = scratchFile(
      `${source.topic}.all.jsonl`,
      readFileSync(first, 'utf8') + readFileSync(second, 'utf8'),
    );
    const secondRun = await exportedAndSimulated(source, everything);
    expect(secondRun.exported).toBe(secondRun.simulated);
    await verifyPasses(source);
  });
});
