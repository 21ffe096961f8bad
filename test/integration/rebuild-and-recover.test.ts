/**
 * `amendsctl rebuild-create` and `amendsctl manifest-recover` (verification.md "Rebuild
 * namespaces", worker.md §1) as built binaries against the real broker and PostgreSQL: a
 * rebuild namespace's workers re-derive exactly what the original's did, a recovered
 * manifest is the original byte for byte, and both refuse a deleted or recreated topic.
 *
 * Topics are this file's own (deleted in afterAll); namespaces are rows that stay.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readManifestFile } from '../../src/cli/input-files.js';
import type { Manifest } from '../../src/domain/config.js';
import { registerNamespace } from '../../src/io/store/namespace-registry.js';
import {
  isOneLineDiagnostic,
  type ProcessResult,
  pipeInto,
  repoRoot,
  requireBuild,
  runAmendsctl,
} from '../support/amendsctl-process.js';
import { testBrokers, testName } from '../support/endpoints.js';
import { deleteTestTopics, describeTestGroup, recreateTestTopic, topicExists } from '../support/kafka-test-tools.js';
import {
  amendsctl,
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
const probe = new StoreProbe();
const fixture = (name: string) => join(repoRoot, 'fixtures', name);
const stories = ['before.jsonl', 'second-key.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'];
/** The broker only: rebuild-create needs no database. */
const brokerOnlyEnv = { AMENDS_BROKERS: testBrokers };

let source: TestSource;
let sourceText: string;
let ends: Map<number, number>;

function run(args: string[], env: Record<string, string> = { ...workerEnv }): Promise<ProcessResult> {
  return runAmendsctl(args, env);
}

/** Exit code and the one-line diagnostic of a refusal. */
async function refusal(args: string[], env?: Record<string, string>): Promise<{ code: number | null; line: string }> {
  const result = await run(args, env);
  expect(result.stdout).toBe('');
  if (result.code === 1) expect(isOneLineDiagnostic(result.stderr), result.stderr).toBe(true);
  return { code: result.code, line: result.stderr.split('\n', 1)[0] ?? '' };
}

/**
 * Registers the manifest's namespace as a worker's or source-load's first use does
 * (worker.md §1); the read-only commands (inspect, export) no longer register anything.
 */
async function register(manifestPath: string): Promise<void> {
  await registerNamespace(probe.pool, await readManifestFile(manifestPath));
}

/** Deletes the topic and waits until the broker has forgotten it. */
async function deleteTopic(topic: string): Promise<void> {
  await deleteTestTopics([topic]);
  const deadline = Date.now() + 20_000;
  while (await topicExists(topic)) {
    if (Date.now() > deadline) throw new Error(`topic ${topic} still exists 20 s after its deletion`);
    await sleep(200);
  }
}

/** The static instance ids of a group's members: the broker names one `<group.instance.id>-<uuid>`. */
async function groupMembers(groupId: string): Promise<string[]> {
  const group = await describeTestGroup(groupId);
  return (group?.members ?? []).map((m) => m.memberId.replace(/-[0-9a-f-]{36}$/, '')).sort();
}

beforeAll(async () => {
  requireBuild();
  source = await createSource(topics, fixture('two-keys.config.json'));
  sourceText = readFileSync(source.manifestPath, 'utf8');
  ends = new Map();
  for (const story of stories) ends = mergeEnds(ends, await loadFile(source, fixture(story)));
});
afterEach(() => stopAllWorkers());
afterAll(async () => {
  await stopAllWorkers();
  await probe.close();
  await deleteTestTopics(topics);
});

describe('amendsctl rebuild-create', () => {
  it("prints the source's manifest with only the namespace changed, without a database", async () => {
    const rebuildNamespace = testName();
    const result = await run(
      ['rebuild-create', '--manifest', source.manifestPath, '--namespace', rebuildNamespace],
      brokerOnlyEnv,
    );
    expect(result.stderr).toBe(
      `amendsctl rebuild-create: AMENDS_DATABASE_URL is not set: did not check whether namespace ${rebuildNamespace} is registered already\n`,
    );
    expect(result.code).toBe(0);
    // Same layout as source-create's, byte for byte, but for the namespace.
    expect(result.stdout).toBe(
      sourceText.replace(`"namespace": "${source.namespace}"`, `"namespace": "${rebuildNamespace}"`),
    );
    const rebuilt = JSON.parse(result.stdout) as Manifest;
    expect(rebuilt).toEqual({ ...source.manifest, config: { ...source.manifest.config, namespace: rebuildNamespace } });

    // A database URL that is set is used for the registry check: unreachable, it refuses.
    const unreachable = await refusal(
      ['rebuild-create', '--manifest', source.manifestPath, '--namespace', rebuildNamespace],
      { ...brokerOnlyEnv, AMENDS_DATABASE_URL: 'postgres://amends@127.0.0.1:1/amends' },
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.line).toContain('cannot reach the database');
    expect(unreachable.line).toContain('unset it to skip that check');
  });

  it("re-derives the original's decisions and outputs with its own group from offset 0", async () => {
    const rebuildNamespace = testName();
    const rebuildPath = scratchFile(
      `${rebuildNamespace}.manifest.json`,
      await amendsctl(['rebuild-create', '--manifest', source.manifestPath, '--namespace', rebuildNamespace]),
    );
    startWorker({ manifestPath: source.manifestPath, instanceId: 'original' });
    startWorker({ manifestPath: rebuildPath, instanceId: 'rebuild' });
    await probe.waitForFrontiers(source.namespace, ends);
    const rows = await probe.waitForFrontiers(rebuildNamespace, ends);
    // Every partition of the rebuild was claimed once, from its first frontier 0.
    expect(rows.map((r) => [r.partition, r.epoch, r.owner])).toEqual([
      [0, 1, 'rebuild'],
      [1, 1, 'rebuild'],
    ]);
    // Its own consumer group, with only the rebuild's worker in it.
    expect(await groupMembers(`amends.${rebuildNamespace}.source`)).toEqual(['rebuild']);
    expect(await groupMembers(source.groupId)).toEqual(['original']);

    for (const what of ['outputs', 'decisions']) {
      const [a, b] = await Promise.all([
        amendsctl(['export', '--manifest', source.manifestPath, '--what', what]),
        amendsctl(['export', '--manifest', rebuildPath, '--what', what]),
      ]);
      expect(a.split('\n').length).toBeGreaterThan(10);
      expect(b).toBe(a);
    }
    // A reader that never reads ends export quietly (closed-pipe.ts): no trace, exit 141.
    const piped = pipeInto(['export', '--manifest', source.manifestPath, '--what', 'decisions'], 'true', workerEnv);
    expect(piped.stderr).toBe('');
    expect(piped.status).toBe('status 141 0');
    // The verifier PASSes both, each against the oracle over the same source records (no
    // output binding here: the source side is compared, and the reasons say the rest is not).
    for (const manifestPath of [source.manifestPath, rebuildPath]) {
      const verified = await run(['verify', '--manifest', manifestPath, '--json']);
      expect(verified.code, verified.stderr).toBe(0);
      const doc = JSON.parse(verified.stdout);
      expect(doc.verdict).toBe('PASS');
      expect(doc.differences).toEqual([]);
      expect(doc.counts.decisions).toBe(doc.counts.records);
      expect(doc.counts.records).toBe([...ends.values()].reduce((a, b) => a + b, 0));
    }

    // Now registered, the rebuild namespace is refused as a new rebuild target.
    const again = await refusal(['rebuild-create', '--manifest', source.manifestPath, '--namespace', rebuildNamespace]);
    expect(again.code).toBe(1);
    expect(again.line).toContain(`namespace ${rebuildNamespace} is registered already`);
    // And its manifest is recovered byte for byte as rebuild-create printed it.
    const recovered = await amendsctl(['manifest-recover', '--namespace', rebuildNamespace]);
    expect(recovered).toBe(readFileSync(rebuildPath, 'utf8'));
  });

  it('refuses usage errors with exit 2', async () => {
    const m = source.manifestPath;
    for (const args of [
      ['rebuild-create', '--namespace', testName()],
      ['rebuild-create', '--manifest', m],
      ['rebuild-create', '--manifest', m, '--namespace', 'Not-Valid'],
      ['rebuild-create', '--manifest', m, '--namespace', source.namespace],
      ['rebuild-create', '--manifest', m, '--namespace', testName(), '--nope'],
    ]) {
      const result = await run(args, brokerOnlyEnv);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stdout).toBe('');
    }
  });
});

describe('amendsctl manifest-recover', () => {
  it('prints the manifest source-create printed, byte for byte', async () => {
    await register(source.manifestPath);
    const result = await run(['manifest-recover', '--namespace', source.namespace]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(sourceText);
  });

  it("keeps domain.md §1's member order for a config file written in another order", async () => {
    const shuffled = scratchFile(
      'shuffled.config.json',
      JSON.stringify({
        stock_keys: [{ threshold: 3, opening: -7, partition: 1, location: 'wien', item: 'bolt ✓' }],
        ledger_origin: '2026-02-28',
      }),
    );
    const other = await createSource(topics, shuffled);
    const printed = readFileSync(other.manifestPath, 'utf8');
    expect(printed.indexOf('"item"')).toBeLessThan(printed.indexOf('"threshold"'));
    await register(other.manifestPath);
    expect(await amendsctl(['manifest-recover', '--namespace', other.namespace])).toBe(printed);
  });

  it('refuses an unknown namespace, a missing database URL, a tampered row and usage errors', async () => {
    const unknown = testName();
    const missing = await refusal(['manifest-recover', '--namespace', unknown]);
    expect(missing.code).toBe(1);
    expect(missing.line).toContain(`namespace ${unknown} is not registered`);

    const noDatabase = await refusal(['manifest-recover', '--namespace', source.namespace], brokerOnlyEnv);
    expect(noDatabase.code).toBe(1);
    expect(noDatabase.line).toContain('AMENDS_DATABASE_URL is not set');

    // A registered namespace whose stored config no longer has its stored digest.
    const tampered = testName();
    const tamperedPath = scratchFile(
      `${tampered}.manifest.json`,
      await amendsctl(['rebuild-create', '--manifest', source.manifestPath, '--namespace', tampered]),
    );
    await register(tamperedPath);
    await probe.pool.query(
      `UPDATE namespaces SET config = jsonb_set(config, '{ledger_origin}', '"2026-01-01"') WHERE namespace = $1`,
      [tampered],
    );
    const altered = await refusal(['manifest-recover', '--namespace', tampered]);
    expect(altered.code).toBe(1);
    expect(altered.line).toMatch(/has digest [0-9a-f]{64}, but the stored config_digest is [0-9a-f]{64}/);

    for (const args of [
      ['manifest-recover'],
      ['manifest-recover', '--namespace', ''],
      ['manifest-recover', '--namespace', 'Not-Valid'],
      ['manifest-recover', '--namespace', source.namespace, 'extra'],
    ]) {
      const result = await run(args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stdout).toBe('');
    }
  });
});

describe('a deleted, then recreated source topic', () => {
  it('is refused by rebuild-create and manifest-recover, naming the topic and both incarnations', async () => {
    const doomed = await createSource(topics);
    await register(doomed.manifestPath);
    const incarnation = doomed.manifest.config.source_incarnation;
    const rebuildArgs = ['rebuild-create', '--manifest', doomed.manifestPath, '--namespace', testName()];
    const recoverArgs = ['manifest-recover', '--namespace', doomed.namespace];

    await deleteTopic(doomed.topic);
    for (const args of [rebuildArgs, recoverArgs]) {
      const gone = await refusal(args);
      expect(gone.code).toBe(1);
      expect(gone.line).toContain(`source topic ${doomed.topic} does not exist`);
      expect(gone.line).toContain(incarnation);
    }

    const recreated = await recreateTestTopic(doomed.topic, doomed.manifest.config.partitions);
    expect(recreated).not.toBe(incarnation);
    for (const args of [rebuildArgs, recoverArgs]) {
      const refused = await refusal(args);
      expect(refused.code).toBe(1);
      expect(refused.line).toContain(`source topic ${doomed.topic} is ${recreated}`);
      expect(refused.line).toContain(`expects ${incarnation}: the topic was deleted and recreated`);
    }
  });
});
