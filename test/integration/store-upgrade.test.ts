/**
 * Users' data survives the schema upgrades (migration 0005, day totals; 0006, namespace ids;
 * 0007, the outbox in the output versions; 0008, configuration revisions; 0009, claims; 0010,
 * amends' own schema; 0011, the SQL read API, whose balances and explain then answer over the
 * converted rows): a database written as an older build wrote it (its migrations, its batch
 * statement: store-v4-writer.ts … store-v9-writer.ts; its tables in `public`, where every build
 * before 0010 kept them) over a real source topic is opened by this build,
 * which converts it in place and moves it into the schema `amends`. Then: every row the old build wrote is unchanged (the namespace
 * now its id), `verify` PASSes, `export` equals `simulate` byte for byte (and, from schema 5,
 * what that build's export printed), and a worker of this build goes on deciding on the
 * converted rows (a correction of the first day re-versions every later day) and `verify`
 * PASSes again. From schema 6, an output topic is then bound and this build's relay and view
 * carry every converted and new envelope to it, so that last `verify` compares the outbox, the
 * output topic and the view too.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest, NamespaceConfig } from '../../src/domain/config.js';
import { fillerLines } from '../../src/domain/filler-load.js';
import type { LedgerState } from '../../src/domain/ledger-state.js';
import { parseSimulationInput } from '../../src/domain/simulation-input.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { applyMigrations, migrations } from '../../src/io/store/migrations.js';
import { registerNamespace } from '../../src/io/store/namespace-registry.js';
import { Database } from '../../src/io/store/postgres.js';
import { requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import { allStories, twoKeysConfig } from '../support/fixture-stories.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { ledgerRows, type PerRecordTable } from '../support/ledger-rows.js';
import { writeAsSchemaV4 } from '../support/store-v4-writer.js';
import { type ExportWhat, exportAsSchemaV5 } from '../support/store-v5-export.js';
import { writeAsSchemaV5 } from '../support/store-v5-writer.js';
import { writeAsSchemaV6 } from '../support/store-v6-writer.js';
import { writeAsSchemaV7 } from '../support/store-v7-writer.js';
import { writeAsSchemaV8 } from '../support/store-v8-writer.js';
import { writeAsSchemaV9 } from '../support/store-v9-writer.js';
import { expectCleanStop, startAmends, stopAllAmends, TransportProbe } from '../support/transport-process.js';
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
const databases: string[] = [];
const probes: StoreProbe[] = [];

/**
 * A new database, as an older build found one: its URL for that build (its tables in `where`)
 * and for this build (no search_path of its own: the default schema, `amends`). Needs
 * CREATEDB (the local stack's role has it: scripts/stack.sh).
 */
async function oldDatabase(where: string): Promise<{ oldUrl: string; url: string }> {
  const name = testName('amends_test_upgrade').replaceAll('-', '_');
  await admin.query(`CREATE DATABASE ${name}`);
  databases.push(name);
  const u = new URL(testDatabaseUrl);
  u.pathname = `/${name}`;
  u.searchParams.delete('options');
  const url = u.toString();
  u.searchParams.set('options', `-c search_path=${where}`);
  return { oldUrl: u.toString(), url };
}

/** An older build: the schema it stopped at, how it wrote a partition's batches, what it wrote. */
interface OldBuild {
  schema: number;
  write: (
    client: pg.ClientBase,
    config: NamespaceConfig,
    partition: number,
    batches: SourceRecord[][],
  ) => Promise<number>;
  /** The per-record tables whose rows the upgrade keeps unchanged (0005 adds totals to output_days). */
  tables: PerRecordTable[];
  /** What its `amendsctl export` printed, when the test can reproduce it. */
  exported?: (client: pg.ClientBase, namespace: string, what: ExportWhat) => Promise<string>;
  /** Bind an output topic after the upgrade and run this build's relay and view before the last verify. */
  transport?: boolean;
  /** Where it kept its tables: `public` before 0010 (the default here), `amends` from 0010 on. */
  tablesIn?: string;
}

const exportKinds: ExportWhat[] = ['decisions', 'outputs', 'quarantine'];

/** The four stories and 300 filler records per key (corrections, redeliveries, cancels among them). */
function storyText(): string {
  const filler = (item: string, location: string, stage: string) =>
    fillerLines({ item, location, stage, count: 300, firstDay: '2026-04-01' })
      .map((l) => JSON.stringify(l))
      .join('\n');
  return `${allStories()}${filler('widget', 'berlin', 'u1')}\n${filler('gadget', 'paris', 'u1')}\n`;
}

/** `export` of every kind by this build, and `simulate` of `file`. */
async function exportedAndSimulated(
  env: Record<string, string>,
  source: TestSource,
  file: string,
): Promise<{ exports: Record<ExportWhat, string>; simulated: string }> {
  const run = async (args: string[]) => {
    const r = await runAmendsctl(args, env);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };
  const m = source.manifestPath;
  const [decisions, outputs, quarantine, simulated] = await Promise.all([
    ...exportKinds.map((what) => run(['export', '--manifest', m, '--what', what])),
    run(['simulate', '--manifest', m, '--file', file]),
  ]);
  return { exports: { decisions, outputs, quarantine } as Record<ExportWhat, string>, simulated: simulated as string };
}

async function verifyPasses(env: Record<string, string>, source: TestSource, bound = false): Promise<void> {
  const r = await runAmendsctl(['verify', '--manifest', source.manifestPath, '--json'], env);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  const report = JSON.parse(r.stdout);
  expect(report).toMatchObject({ verdict: 'PASS', differences: [] });
  // Bound: the outbox, the output topic and the view were compared, not skipped.
  if (bound) expect(report.reasons).toEqual([]);
}

/** Each day's total is its authoritative posts' sum and count: the number of days where it is not. */
async function daysWithWrongTotals(db: Database, namespace: string): Promise<number> {
  const { rows } = await db.pool.query(
    `SELECT count(*)::int AS n FROM output_days o
       LEFT JOIN LATERAL (
            SELECT coalesce(sum(a.qty), 0)::bigint AS qty, count(*)::int AS posts FROM authority a
             WHERE a.ns = o.ns AND a.item = o.item AND a.location = o.location
               AND a.day = o.day AND a.op = 'post') AS t ON true
      WHERE o.ns = (SELECT id FROM namespaces WHERE namespace = $1) AND (o.qty <> t.qty OR o.posts <> t.posts)`,
    [namespace],
  );
  return rows[0].n;
}

/**
 * output-create on the upgraded database, then this build's relay and view until every
 * envelope is published and viewed: both start from the converted relay cursors (0007).
 */
async function relayAndView(env: Record<string, string>, url: string, source: TestSource): Promise<void> {
  const outputTopic = `${source.topic}-out`;
  topics.add(outputTopic);
  const bound = await runAmendsctl(['output-create', '--manifest', source.manifestPath, '--topic', outputTopic], env);
  expect(bound.code, bound.stderr).toBe(0);
  const probe = new TransportProbe(url);
  try {
    const { total, pending } = await probe.outbox(source.namespace);
    expect(pending).toBe(total);
    const relay = startAmends('relay', source.manifestPath, [], env);
    const view = startAmends('view', source.manifestPath, [], env);
    await probe.waitPublished(source.namespace, total);
    await probe.waitViewCaughtUp({ ...source, outputTopic });
    await expectCleanStop(relay, view);
  } finally {
    await probe.close();
  }
}

/** A correction of the first filler day and a new post, for a worker of this build to decide. */
function moreRecords(): string {
  const post = (item: string, location: string, txn: string, rev: number, day: string, qty: number) => ({
    key: { item, location },
    value: { schema: 1, txn, rev, op: 'post', item, location, day, qty },
  });
  const more = [
    post('widget', 'berlin', 'Fu1-0', 5, '2026-04-01', 3),
    post('gadget', 'paris', 'U-new', 1, '2027-06-01', 4),
  ];
  return `${more.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

/**
 * The read API (0011) over the converted rows: `balances` prints each day's latest version that
 * export printed, retractions left out, and `explain` of a key's last day adds up (it checks its
 * sum against the stored closing).
 */
async function expectReadApiOnConverted(env: Record<string, string>, source: TestSource, outputs: string) {
  const latest = new Map<string, Record<string, unknown>>();
  for (const line of outputs.trim().split('\n')) {
    const v = JSON.parse(line);
    latest.set(JSON.stringify([v.item, v.location, v.day]), v);
  }
  const want = [...latest.values()]
    .filter((v) => !v.retracted)
    .map(({ item, location, day, closing, status, version, cause }) =>
      JSON.stringify({ item, location, day, closing, status, version, cause }),
    );
  const balances = await runAmendsctl(['balances', '--manifest', source.manifestPath, '--format', 'jsonl'], env);
  expect(balances.code, balances.stderr).toBe(0);
  expect(balances.stdout.trim().split('\n')).toEqual(want);
  const day = JSON.parse(want[want.length - 1] as string).day;
  const args = ['--manifest', source.manifestPath, '--item', 'widget', '--location', 'berlin', '--day', day, '--json'];
  const explained = await runAmendsctl(['explain', ...args], env);
  expect(explained.code, explained.stderr).toBe(0);
}

/**
 * The whole story for one older build: write its database, open it with this build, check the
 * rows, verify and export, then let a worker of this build go on and check again.
 */
async function upgradeAndGoOn(old: OldBuild): Promise<void> {
  const { oldUrl, url } = await oldDatabase(old.tablesIn ?? 'public');
  const env = { ...workerEnv, AMENDS_DATABASE_URL: url };
  const probe = new StoreProbe(url);
  probes.push(probe);
  const source = await createSource(topics, twoKeysConfig);
  const manifest = JSON.parse(readFileSync(source.manifestPath, 'utf8')) as Manifest;
  const first = scratchFile(`${source.topic}.first.jsonl`, storyText());
  const ends = await loadFile(source, first);

  // The old database: its migrations, the namespace, every record decided by its statement.
  const client = new pg.Client({ connectionString: oldUrl });
  await client.connect();
  const exportedBefore: Partial<Record<ExportWhat, string>> = {};
  try {
    const through = Array.from({ length: old.schema }, (_, i) => i + 1);
    expect(await applyMigrations(client, { through: old.schema })).toEqual(through);
    await registerNamespace(client, manifest);
    const records = parseSimulationInput(readFileSync(first, 'utf8'), manifest.config);
    for (const partition of [0, 1]) {
      const own = records.filter((r) => r.partition === partition);
      const batches = Array.from({ length: Math.ceil(own.length / 50) }, (_, i) => own.slice(i * 50, i * 50 + 50));
      expect(await old.write(client, manifest.config, partition, batches)).toBe(ends.get(partition));
    }
    const before = await ledgerRows(client, source.namespace, old.tables);
    expect(before.length).toBeGreaterThan(600);
    if (old.exported) {
      for (const what of exportKinds) exportedBefore[what] = await old.exported(client, source.namespace, what);
      expect(exportedBefore.decisions?.split('\n').length).toBeGreaterThan(600);
    }

    // This build opens it: the later migrations convert it.
    const db = await Database.open(url, 'amends-test upgrade');
    try {
      const applied = await db.pool.query('SELECT version FROM schema_migrations ORDER BY version');
      expect(applied.rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
      expect(await ledgerRows(db.pool, source.namespace, old.tables)).toEqual(before);
      expect(await daysWithWrongTotals(db, source.namespace)).toBe(0);
      // 0008: every partition decides on under revision 1, the configuration it was registered with.
      const revised = await db.pool.query('SELECT DISTINCT config_revision FROM partitions WHERE namespace = $1', [
        source.namespace,
      ]);
      expect(revised.rows).toEqual([{ config_revision: 1 }]);
      // 0010: everything moved out of public into amends' own schema, nothing left behind.
      expect(await relationsIn(db, 'public')).toEqual([]);
      expect(await relationsIn(db, 'amends')).toContain('schema_migrations');
    } finally {
      await db.close();
    }
  } finally {
    await client.end();
  }
  await verifyPasses(env, source);
  const firstRun = await exportedAndSimulated(env, source, first);
  const firstExport = firstRun.exports.decisions + firstRun.exports.outputs;
  expect(firstExport.split('\n').length).toBeGreaterThan(1_000);
  expect(firstExport).toBe(firstRun.simulated);
  for (const [what, text] of Object.entries(exportedBefore)) {
    expect(firstRun.exports[what as ExportWhat], what).toBe(text);
  }
  await expectReadApiOnConverted(env, source, firstRun.exports.outputs);

  // A worker of this build decides on: a correction of the first filler day and a new post.
  const second = scratchFile(`${source.topic}.second.jsonl`, moreRecords());
  const allEnds = mergeEnds(ends, await loadFile(source, second));
  startWorker({ manifestPath: source.manifestPath, env });
  await probe.waitForFrontiers(source.namespace, allEnds);
  await stopAllWorkers();
  const everything = scratchFile(
    `${source.topic}.all.jsonl`,
    readFileSync(first, 'utf8') + readFileSync(second, 'utf8'),
  );
  const secondRun = await exportedAndSimulated(env, source, everything);
  expect(secondRun.exports.decisions + secondRun.exports.outputs).toBe(secondRun.simulated);
  if (old.transport) await relayAndView(env, url, source);
  await verifyPasses(env, source, old.transport === true);
}

beforeAll(async () => {
  requireBuild();
  await admin.connect();
});
afterAll(async () => {
  await stopAllWorkers();
  await stopAllAmends();
  for (const probe of probes) await probe.close();
  for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
  await deleteTestTopics(topics);
});

/** The tables and views of `schema` in the database `db` is connected to. */
async function relationsIn(db: Database, schema: string): Promise<string[]> {
  const rows = await db.pool.query(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'v') ORDER BY 1`,
    [schema],
  );
  return rows.rows.map((r) => r.relname);
}

describe('upgrading a database written by an older build', () => {
  it('schema 4: converted in place (0005, 0006): rows unchanged, verify PASS, export = simulate, workers go on', async () => {
    const state: LedgerState = new Map();
    await upgradeAndGoOn({
      schema: 4,
      write: (client, config, partition, batches) => writeAsSchemaV4(client, config, partition, batches, state),
      tables: ['decisions', 'authority', 'output_versions', 'outbox'],
    });
  });

  it('schema 5: converted in place (0006): rows unchanged, export as before and = simulate, verify PASS, workers go on', async () => {
    await upgradeAndGoOn({
      schema: 5,
      write: writeAsSchemaV5,
      tables: ['decisions', 'authority', 'output_versions', 'output_days', 'outbox'],
      exported: exportAsSchemaV5,
    });
  });

  it('schema 6: converted in place (0007): rows unchanged, verify PASS, workers, relay and view go on', async () => {
    await upgradeAndGoOn({
      schema: 6,
      write: writeAsSchemaV6,
      tables: ['decisions', 'authority', 'output_versions', 'output_days', 'outbox'],
      transport: true,
    });
  });

  // 0008 touches neither the outbox nor the relay cursors: schema 6's case runs the transport.
  it('schema 7: converted in place (0008, revision 1): rows unchanged, verify PASS, workers go on', async () => {
    await upgradeAndGoOn({
      schema: 7,
      write: writeAsSchemaV7,
      tables: ['decisions', 'authority', 'output_versions', 'output_days', 'outbox'],
    });
  });

  // 0009 adds the partition rows' claim (NULL until the next claim): this build's workers claim afresh.
  it('schema 8: converted in place (0009, claims): rows unchanged, verify PASS, workers go on', async () => {
    await upgradeAndGoOn({
      schema: 8,
      write: writeAsSchemaV8,
      tables: ['decisions', 'authority', 'output_versions', 'output_days', 'outbox'],
    });
  });

  // 0010 moves every table, view and function out of public: rows, ids and claims go with them.
  it('schema 9: moved into its own schema (0010): rows unchanged, verify PASS, workers go on', async () => {
    await upgradeAndGoOn({
      schema: 9,
      write: writeAsSchemaV9,
      tables: ['decisions', 'authority', 'output_versions', 'output_days', 'outbox'],
    });
  });

  // 0011 adds the read API beside the tables 0010 put in amends' own schema. The schema-10 build
  // sent schema 9's statements (0010 changed none), so the v9 writer writes as it did.
  it('schema 10: converted in place (0011, read API): rows unchanged, verify PASS, workers go on', async () => {
    await upgradeAndGoOn({
      schema: 10,
      write: writeAsSchemaV9,
      tables: ['decisions', 'authority', 'output_versions', 'output_days', 'outbox'],
      tablesIn: 'amends',
    });
  });
});
