/**
 * `amendsctl inspect`'s source status (README: inspect): the built binary against the real
 * broker and PostgreSQL says whether the ends it shows are the namespace's topic's, and
 * names what is wrong otherwise: unreachable, topic_missing, incarnation_changed (deleted
 * and recreated), partitions_changed. With any status but ok, no end or lag is shown.
 *
 * Topics are this file's own (deleted in afterAll); namespaces are rows that stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers } from '../support/endpoints.js';
import { fixturePath } from '../support/fixture-stories.js';
import { rawTopicMetadata } from '../support/kafka-raw-metadata.js';
import { addPartitions, eventually, numberedRecords, TestProducer } from '../support/kafka-source-fixtures.js';
import { deleteTestTopics, recreateTestTopic, topicExists } from '../support/kafka-test-tools.js';
import { amendsctl, createSource, loadFile, type TestSource, workerEnv } from '../support/worker-process.js';

const topics = new Set<string>();

interface Inspection {
  source: { status: string; detail: string | null };
  partitions: { partition: number; frontier: number; end: number | null; lag: number | null }[];
  view: {
    output_status: { status: string; detail: string | null } | null;
    partitions: { end: number | null }[];
  } | null;
}

async function inspectJson(source: TestSource, env: Record<string, string> = {}): Promise<Inspection> {
  const result = await runAmendsctl(['inspect', '--manifest', source.manifestPath, '--json'], { ...workerEnv, ...env });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Inspection;
}

async function inspectHuman(source: TestSource, env: Record<string, string> = {}): Promise<string[]> {
  const result = await runAmendsctl(['inspect', '--manifest', source.manifestPath], { ...workerEnv, ...env });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.split('\n');
}

/** A fresh source with the `before` story loaded (which registers the namespace). */
async function loadedSource(): Promise<{ source: TestSource; ends: Map<number, number> }> {
  const source = await createSource(topics);
  const ends = await loadFile(source, fixturePath('before.jsonl'));
  return { source, ends };
}

function expectNoEnds(inspection: Inspection): void {
  for (const p of inspection.partitions) {
    expect(p.end, `partition ${p.partition}`).toBeNull();
    expect(p.lag, `partition ${p.partition}`).toBeNull();
  }
}

/** The human table's partition rows (partition, epoch, frontier, revision, end, lag …) show "-" for end and lag. */
function expectNoEndsShown(lines: string[], partitions: number): void {
  for (let p = 0; p < partitions; p++) {
    const row = lines.find((l) => new RegExp(`^${p}\\s`).test(l));
    expect(row, lines.join('\n')).toMatch(new RegExp(`^${p}\\s+\\d+\\s+\\d+\\s+\\d+\\s+-\\s+-\\s`));
  }
}

beforeAll(() => requireBuild());
afterAll(() => deleteTestTopics(topics));

describe('amendsctl inspect: source status', () => {
  it('ok: the ends and lag of the manifest’s topic, and the output topic’s status', async () => {
    const { source, ends } = await loadedSource();
    const outputTopic = `${source.topic}-out`;
    topics.add(outputTopic);
    await amendsctl(['output-create', '--manifest', source.manifestPath, '--topic', outputTopic]);

    const inspection = await inspectJson(source);
    expect(inspection.source).toEqual({ status: 'ok', detail: null });
    expect(inspection.partitions.map((p) => [p.end, p.lag])).toEqual(
      inspection.partitions.map((p) => [ends.get(p.partition) ?? 0, ends.get(p.partition) ?? 0]),
    );
    expect(inspection.view?.output_status).toEqual({ status: 'ok', detail: null });
    expect(inspection.view?.partitions.map((p) => p.end)).toEqual([0, 0]);
    const lines = await inspectHuman(source);
    expect(lines).toContain('source topic ok');
    expect(lines).toContain('output topic ok');
  });

  it('ok under load: ten inspections at once all read the ends (none says unreachable)', async () => {
    const { source, ends } = await loadedSource();
    const runs = await Promise.all(Array.from({ length: 10 }, () => inspectJson(source)));
    for (const inspection of runs) {
      expect(inspection.source).toEqual({ status: 'ok', detail: null });
      expect(inspection.partitions.map((p) => p.end)).toEqual([ends.get(0) ?? 0, ends.get(1) ?? 0]);
    }
  });

  it('unreachable: a bad broker address, and still the database part', async () => {
    const { source } = await loadedSource();
    const env = { AMENDS_BROKERS: '127.0.0.1:1' };
    // Both at once: each waits out the first request's timeout.
    const [inspection, lines] = await Promise.all([inspectJson(source, env), inspectHuman(source, env)]);
    expect(inspection.source.status).toBe('unreachable');
    expect(inspection.source.detail).toContain('127.0.0.1:1');
    expectNoEnds(inspection);
    expect(inspection.partitions.map((p) => p.frontier)).toEqual([0, 0]);
    expect(lines.filter((l) => l.startsWith('source topic unreachable: '))).toHaveLength(1);
    expect(lines.find((l) => l.startsWith('source topic'))).toMatch(/; end and lag not shown$/);
  });

  it('partitions_changed: partitions were added to the topic', async () => {
    const { source } = await loadedSource();
    await addPartitions(source.topic, 3);
    await eventually(
      '3 partitions in metadata',
      async () => (await rawTopicMetadata(testBrokers, source.topic)).partitions === 3,
    );
    const inspection = await inspectJson(source);
    expect(inspection.source.status).toBe('partitions_changed');
    expect(inspection.source.detail).toContain(`topic ${source.topic} has 3 partitions, but the manifest expects 2`);
    expectNoEnds(inspection);
    const lines = await inspectHuman(source);
    expect(lines.filter((l) => l.startsWith('source topic partitions_changed: '))).toHaveLength(1);
    expectNoEndsShown(lines, 2);
  });

  it('topic_missing, then incarnation_changed: deleted, then recreated with the same name', async () => {
    const { source } = await loadedSource();
    const incarnation = source.manifest.config.source_incarnation;
    await deleteTestTopics([source.topic]);
    await eventually('the topic is gone', async () => !(await topicExists(source.topic)), 20_000);

    const missing = await inspectJson(source);
    expect(missing.source.status).toBe('topic_missing');
    expect(missing.source.detail).toContain(`topic ${source.topic} does not exist`);
    expect(missing.source.detail).toContain(incarnation);
    expectNoEnds(missing);
    const missingLines = await inspectHuman(source);
    expect(missingLines.join('\n')).not.toContain('unreachable');
    expect(missingLines.filter((l) => l.startsWith('source topic topic_missing: '))).toHaveLength(1);

    const recreated = await recreateTestTopic(source.topic, 2);
    expect(recreated).not.toBe(incarnation);
    // The new topic has records of its own: their ends must not pass for the namespace's.
    const producer = await TestProducer.open();
    try {
      await producer.send(source.topic, [...numberedRecords(0, 3), ...numberedRecords(1, 2)]);
    } finally {
      await producer.close();
    }
    const changed = await inspectJson(source);
    expect(changed.source.status).toBe('incarnation_changed');
    expect(changed.source.detail).toContain(
      `topic ${source.topic} is ${recreated}, but the manifest expects ${incarnation}`,
    );
    expectNoEnds(changed);
    const changedLines = await inspectHuman(source);
    expect(changedLines.filter((l) => l.startsWith('source topic incarnation_changed: '))).toHaveLength(1);
    expectNoEndsShown(changedLines, 2);
  });
});
