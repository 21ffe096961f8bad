/**
 * Configuration revisions end to end (docs/design.md#configuration-revisions): a running worker
 * takes a revision up without a restart; a record for a new key before the revision is
 * UNKNOWN_KEY and one after it is APPLIED on the revision's terms; an override that would
 * change a decided key is refused, naming it; verify, inspect, manifest-recover, simulate,
 * export --what revisions and the dashboard's database feed all see the chain.
 */
import { dirname } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/domain/canonical-json.js';
import { configDigest, type Manifest, parseManifest, parseNamespaceConfig } from '../../src/domain/config.js';
import { baseChain, nextRevision } from '../../src/domain/config-revision.js';
import { manifestText } from '../../src/domain/manifest-text.js';
import { DashboardFeed } from '../../src/tui/dashboard-feed.js';
import { DashboardStore } from '../../src/tui/dashboard-store.js';
import { requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { TestProducer } from '../support/kafka-source-fixtures.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { registerByLoading } from '../support/namespace-registration.js';
import { expectExportEqualsSimulateOf, placed, post, stockKey } from '../support/worker-fault-harness.js';
import {
  amendsctl,
  createSource,
  StoreProbe,
  scratchFile,
  startWorker,
  stopAllWorkers,
  type TestSource,
  workerEnv,
} from '../support/worker-process.js';
import { header } from '../tui/fixtures.js';

const topics = new Set<string>();
const probe = new StoreProbe();
let producer: TestProducer;

beforeAll(async () => {
  requireBuild();
  producer = await TestProducer.open();
});
afterEach(stopAllWorkers);
afterAll(async () => {
  await stopAllWorkers();
  await producer?.close();
  await probe.close();
  await deleteTestTopics(topics);
});

const day = '2026-03-02';
const widget = { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 };
/** The new key's terms: its one post of 4 closes at 6, below the threshold: LOW. */
const gadget = { item: 'gadget', location: 'paris', partition: 1, opening: 2, threshold: 10 };

function configFile(keys: object[]): string {
  return scratchFile(
    `revision-${keys.length}-${process.hrtime.bigint()}.json`,
    JSON.stringify({
      ledger_origin: '2026-03-01',
      stock_keys: keys,
    }),
  );
}

const widgetPost = (txn: string) => ({ partition: 0, key: stockKey(), value: post(txn, 1, day, 5) });
const gadgetPost = (txn: string) => ({
  partition: 1,
  key: stockKey('gadget', 'paris'),
  value: post(txn, 1, day, 4, 'gadget', 'paris'),
});

/** export --what revisions (with the old manifest and the new) and the dashboard's database feed show the chain. */
async function expectRevisionsShown(source: TestSource, revised: Manifest): Promise<void> {
  const second = revised.revisions?.[0];
  const exportRevisions = async (path: string) =>
    (await amendsctl(['export', '--manifest', path, '--what', 'revisions']))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
  const lines = await exportRevisions(source.manifestPath);
  expect(lines.map((l) => [l.type, l.revision, l.from, l.digest])).toEqual([
    ['revision', 1, { '0': 0, '1': 0 }, configDigest(source.manifest.config)],
    ['revision', 2, { '0': 2, '1': 1 }, second?.digest],
  ]);
  expect(canonicalJson(lines[1]?.config)).toBe(canonicalJson(second?.config));
  const revisedPath = scratchFile(`${source.namespace}.shown.json`, manifestText(revised));
  expect(await exportRevisions(revisedPath)).toEqual(lines);

  const partitionCount = source.manifest.config.partitions;
  const store = new DashboardStore({ header: { ...header, namespace: source.namespace }, partitionCount });
  const feed = new DashboardFeed({
    db: probe.pool,
    namespace: source.namespace,
    sourceTopic: source.topic,
    partitionCount,
    brokers: null,
    store,
  });
  try {
    await feed.pollOnce();
    store.flush();
    expect(store.getSnapshot().data.feedError).toBeNull();
    expect(store.getSnapshot().data.partitions.map((p) => p.configRevision)).toEqual([2, 2]);
  } finally {
    await feed.stop();
    store.dispose();
  }
}

interface Line {
  partition: number;
  offset: number;
  outcome: string;
}

describe('amendsctl config-revise', () => {
  it('a running worker decides under the new revision from its positions on; verify PASS', async () => {
    const source = await createSource(topics);
    // Two frontiers that differ: each partition's position is its own.
    const before = [widgetPost('W1'), widgetPost('W0'), gadgetPost('G1')];
    const beforeOffsets = await producer.send(source.topic, before);
    startWorker({ manifestPath: source.manifestPath });
    await probe.waitForFrontiers(
      source.namespace,
      new Map([
        [0, 2],
        [1, 1],
      ]),
    );

    const changed = await runAmendsctl(
      ['config-revise', '--manifest', source.manifestPath, '--config', configFile([{ ...widget, opening: 99 }])],
      { ...workerEnv },
    );
    expect(changed.code).toBe(1);
    expect(changed.stderr).toMatch(/"widget"@"berlin" already has decisions under partition 0, opening 100/);

    const revised = await runAmendsctl(
      ['config-revise', '--manifest', source.manifestPath, '--config', configFile([widget, gadget])],
      { ...workerEnv },
    );
    expect(revised.stderr).toBe(`config-revise: revision 2 of namespace ${source.namespace} in force from 0:2 1:1\n`);
    expect(revised.code).toBe(0);
    const manifest = parseManifest(JSON.parse(revised.stdout));
    expect(manifest.revisions?.map((r) => [r.revision, r.from])).toEqual([[2, [2, 1]]]);
    const revisedPath = scratchFile(`${source.namespace}.revised.json`, revised.stdout);

    const after = [widgetPost('W2'), gadgetPost('G2')];
    const afterOffsets = await producer.send(source.topic, after);
    await probe.waitForFrontiers(
      source.namespace,
      new Map([
        [0, 3],
        [1, 2],
      ]),
    );

    const lines = (await amendsctl(['export', '--manifest', revisedPath, '--what', 'decisions']))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Line);
    expect(lines.filter((l) => l.partition === 1).map((l) => l.outcome)).toEqual(['UNKNOWN_KEY', 'APPLIED']);
    const outputs = (await amendsctl(['export', '--manifest', revisedPath, '--what', 'outputs'])).trim().split('\n');
    const gadgetOutput = outputs.map((l) => JSON.parse(l)).find((o) => o.item === 'gadget');
    expect(gadgetOutput).toMatchObject({ day, version: 1, closing: 6, status: 'LOW' });

    const records = placed([...before, ...after], [...beforeOffsets, ...afterOffsets]);
    await expectExportEqualsSimulateOf({ ...source, manifestPath: revisedPath }, records);
    for (const path of [revisedPath, source.manifestPath]) {
      const verified = await runAmendsctl(['verify', '--manifest', path, '--json'], { ...workerEnv });
      expect(JSON.parse(verified.stdout).verdict, verified.stderr).toBe('PASS');
    }
    const inspected = JSON.parse(await amendsctl(['inspect', '--manifest', source.manifestPath, '--json']));
    expect(inspected.partitions.map((p: { config_revision: number }) => p.config_revision)).toEqual([2, 2]);
    expect(await amendsctl(['manifest-recover', '--namespace', source.namespace])).toBe(revised.stdout);
    await expectRevisionsShown(source, manifest);
  });

  it('refuses a manifest whose revisions the database does not hold', async () => {
    const source = await createSource(topics);
    const base = source.manifest.config;
    const other = parseNamespaceConfig({ ...base, stock_keys: [widget, gadget] });
    const revisions = [nextRevision(baseChain(base), [0, 0], other)];
    const path = scratchFile(`${source.namespace}.other.json`, manifestText({ ...source.manifest, revisions }));
    await registerByLoading(manifestText(source.manifest), source.namespace, dirname(path), { ...workerEnv });
    const result = await runAmendsctl(['verify', '--manifest', path], { ...workerEnv });
    expect(result.stderr).toMatch(
      new RegExp(
        `revision 2 of namespace ${source.namespace} has digest ${revisions[0]?.digest}, but the database has no such revision`,
      ),
    );
    expect(result.code).toBe(1);
  });
});
