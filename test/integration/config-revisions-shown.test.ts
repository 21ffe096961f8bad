/**
 * The revision in force per partition, after `amendsctl config-revise` (issue 32): `export
 * --what revisions` prints the chain the database holds, `inspect` shows `config_revision`,
 * and the dashboard's PostgreSQL feed carries it into its store. The built binaries, a real
 * worker, broker and PostgreSQL; the topic is this file's own (deleted in afterAll), the
 * namespace a fresh one.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/domain/canonical-json.js';
import type { ConfigFile, Manifest } from '../../src/domain/config.js';
import { DashboardFeed } from '../../src/tui/dashboard-feed.js';
import { DashboardStore } from '../../src/tui/dashboard-store.js';
import { requireBuild } from '../support/amendsctl-process.js';
import { fixturePath } from '../support/fixture-stories.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import {
  amendsctl,
  createSource,
  loadFile,
  mergeEnds,
  StoreProbe,
  scratchFile,
  startWorker,
  stopAllWorkers,
} from '../support/worker-process.js';
import { header } from '../tui/fixtures.js';

const topics = new Set<string>();
const probe = new StoreProbe();

interface RevisionLine {
  type: string;
  revision: number;
  from: Record<string, number>;
  digest: string;
  config: unknown;
}

async function exportRevisions(manifestPath: string): Promise<RevisionLine[]> {
  const text = await amendsctl(['export', '--manifest', manifestPath, '--what', 'revisions']);
  return text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as RevisionLine);
}

beforeAll(() => requireBuild());
afterAll(async () => {
  await stopAllWorkers();
  await deleteTestTopics(topics);
  await probe.close();
});

describe('the configuration revision in force, after config-revise', () => {
  it('is shown by export --what revisions, inspect and the dashboard feed', async () => {
    const twoKeys = fixturePath('two-keys.config.json');
    const source = await createSource(topics, twoKeys);
    // widget@berlin on partition 0, gadget@paris on partition 1: two different frontiers.
    const ends = mergeEnds(
      await loadFile(source, fixturePath('before.jsonl')),
      await loadFile(source, fixturePath('second-key.jsonl')),
    );
    expect(ends.get(0)).not.toBe(ends.get(1));
    const worker = startWorker({ manifestPath: source.manifestPath });
    await probe.waitForFrontiers(source.namespace, ends);
    expect((await worker.stop('SIGTERM')).code).toBe(0);

    // Revision 2 adds a key; it is in force from each partition's frontier, here the ends.
    const file = JSON.parse(readFileSync(twoKeys, 'utf8')) as ConfigFile;
    const bolt = { item: 'bolt', location: 'rome', partition: 0, opening: 10, threshold: 1 };
    const configPath = scratchFile(
      `${source.namespace}.v2.json`,
      JSON.stringify({ ...file, stock_keys: [...file.stock_keys, bolt] }),
    );
    const revisedText = await amendsctl(['config-revise', '--manifest', source.manifestPath, '--config', configPath]);
    const revised = JSON.parse(revisedText) as Manifest;
    const second = revised.revisions?.[0];
    const from = { '0': ends.get(0), '1': ends.get(1) };
    expect(second?.from).toEqual([ends.get(0), ends.get(1)]);

    // The manifest saved before the revision: export reads the chain from the database.
    const registered = await probe.pool.query<{ config_digest: string }>(
      'SELECT config_digest FROM namespaces WHERE namespace = $1',
      [source.namespace],
    );
    const lines = await exportRevisions(source.manifestPath);
    expect(lines.map((l) => [l.type, l.revision, l.from, l.digest])).toEqual([
      ['revision', 1, { '0': 0, '1': 0 }, registered.rows[0]?.config_digest],
      ['revision', 2, from, second?.digest],
    ]);
    expect(canonicalJson(lines[0]?.config)).toBe(canonicalJson(revised.config));
    expect(canonicalJson(lines[1]?.config)).toBe(canonicalJson(second?.config));
    expect(await exportRevisions(scratchFile(`${source.namespace}.v2.manifest.json`, revisedText))).toEqual(lines);

    const inspection = JSON.parse(await amendsctl(['inspect', '--manifest', source.manifestPath, '--json'])) as {
      partitions: { partition: number; frontier: number; config_revision: number }[];
    };
    expect(inspection.partitions.map((p) => [p.partition, p.frontier, p.config_revision])).toEqual([
      [0, ends.get(0), 2],
      [1, ends.get(1), 2],
    ]);

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
  });
});
