/**
 * `amendsctl source-adopt` against the real broker, run as the built binary: topics made here
 * with a plain admin client (as a team's own tooling would), adopted when safe, refused with
 * every problem and its fix when not, and never changed. Every topic a test names is deleted
 * in afterAll.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/domain/config.js';
import { manifestText } from '../../src/domain/manifest-text.js';
import { KafkaSourceObserver } from '../../src/io/kafka/kafka-source-observer.js';
import { sourceObservationBudgetMs } from '../../src/io/kafka/kafka-timeouts.js';
import { isOneLineDiagnostic, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { rawTopicMetadata } from '../support/kafka-raw-metadata.js';
import { deleteRecordsBefore, numberedRecords, TestProducer } from '../support/kafka-source-fixtures.js';
import { createTestTopic, deleteTestTopics, describeTestTopicConfig } from '../support/kafka-test-tools.js';
import { registerByLoading } from '../support/namespace-registration.js';

const ownTopics = new Set<string>();
const scratch = mkdtempSync(join(tmpdir(), 'amends-test-source-adopt-'));
const env = { AMENDS_BROKERS: testBrokers };
const withDatabase = { ...env, AMENDS_DATABASE_URL: testDatabaseUrl };
/** What a team's producers would have made: delete-only, unlimited. */
const safeConfig = { 'cleanup.policy': 'delete', 'retention.ms': '-1', 'retention.bytes': '-1' };
const fixCommand = (topic: string, assignment: string) =>
  `kafka-configs.sh --bootstrap-server ${testBrokers} --alter --entity-type topics --entity-name ${topic} --add-config ${assignment} (or rpk topic alter-config ${topic} --set ${assignment})`;

/** A fresh topic made outside amends, owned by this file. */
async function existingTopic(partitions: number, config: Record<string, string>): Promise<string> {
  const topic = testName();
  ownTopics.add(topic);
  await createTestTopic(topic, partitions, config);
  return topic;
}

/** The retention settings as the broker reports them. */
function retentionOf(topic: string): Promise<Record<string, string>> {
  return describeTestTopicConfig(topic, Object.keys(safeConfig));
}

/** Produces `count` records on each of the first `partitions` partitions. */
async function produce(topic: string, partitions: number, count: number): Promise<void> {
  const producer = await TestProducer.open();
  try {
    for (let p = 0; p < partitions; p++) await producer.send(topic, numberedRecords(p, count));
  } finally {
    await producer.close();
  }
}

/** Runs source-adopt and expects a refusal: exit 1, nothing on stdout, one line; returns it. */
async function refusal(args: string[], environment: Record<string, string> = env): Promise<string> {
  const result = await runAmendsctl(['source-adopt', ...args], environment);
  expect(result.stdout).toBe('');
  expect(isOneLineDiagnostic(result.stderr), result.stderr).toBe(true);
  expect(result.code).toBe(1);
  return result.stderr;
}

beforeAll(() => requireBuild());
afterAll(async () => {
  await deleteTestTopics(ownTopics);
});

describe('amendsctl source-adopt', () => {
  it('adopts a safe topic: the manifest source-create would print, with the topic UUID, that the worker accepts', async () => {
    const topic = await existingTopic(3, safeConfig);
    await produce(topic, 3, 2);
    const configPath = join(scratch, 'two-keys.json');
    const stockKeys = [
      { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
      { item: 'gadget', location: 'paris', partition: 2, opening: -5, threshold: 0 },
    ];
    writeFileSync(configPath, JSON.stringify({ ledger_origin: '2026-01-31', stock_keys: stockKeys }));
    const namespace = testName();
    const result = await runAmendsctl(
      ['source-adopt', '--namespace', namespace, '--topic', topic, '--config', configPath],
      env,
    );
    expect(result.stderr).toBe(
      `amendsctl source-adopt: AMENDS_DATABASE_URL is not set: did not check whether namespace ${namespace} is registered already\n`,
    );
    expect(result.code).toBe(0);

    const manifest = parseManifest(JSON.parse(result.stdout));
    expect(result.stdout).toBe(manifestText(manifest));
    const raw = await rawTopicMetadata(testBrokers, topic);
    expect(manifest).toEqual({
      source_topic: topic,
      config: {
        namespace,
        schema_version: 1,
        ledger_origin: '2026-01-31',
        partitions: 3,
        stock_keys: stockKeys,
        source_incarnation: `kafka:${raw.topicIdHex}`,
      },
    });

    // The worker's own observer accepts the adopted topic under this manifest.
    const observer = await KafkaSourceObserver.open({
      brokers: testBrokers,
      topic,
      incarnation: manifest.config.source_incarnation,
      partitions: manifest.config.partitions,
    });
    try {
      const observation = await observer.observe([0, 1, 2], AbortSignal.timeout(sourceObservationBudgetMs));
      expect(observation.valid, JSON.stringify(observation)).toBe(true);
    } finally {
      await observer.close();
    }
    expect(await retentionOf(topic)).toEqual(safeConfig);
  });

  it('refuses compaction, naming the command that turns it off', async () => {
    const topic = await existingTopic(1, { ...safeConfig, 'cleanup.policy': 'compact' });
    const line = await refusal(['--namespace', testName(), '--topic', topic]);
    expect(line).toContain(
      `topic ${topic} cannot be adopted, 1 problem: (1) topic ${topic} has cleanup.policy=compact`,
    );
    expect(line).toContain(fixCommand(topic, 'cleanup.policy=delete'));
    expect(line).toContain('if compaction ever ran, records may be gone already');
    expect((await retentionOf(topic))['cleanup.policy']).toBe('compact');
  });

  it('refuses a finite retention.ms, and a finite retention.bytes', async () => {
    const byTime = await existingTopic(1, { ...safeConfig, 'retention.ms': '86400000' });
    const timeLine = await refusal(['--namespace', testName(), '--topic', byTime]);
    expect(timeLine).toContain(`(1) topic ${byTime} has retention.ms=86400000, not -1: records can expire`);
    expect(timeLine).toContain(fixCommand(byTime, 'retention.ms=-1'));

    const bySize = await existingTopic(1, { ...safeConfig, 'retention.bytes': '1073741824' });
    const sizeLine = await refusal(['--namespace', testName(), '--topic', bySize]);
    expect(sizeLine).toContain(`(1) topic ${bySize} has retention.bytes=1073741824, not -1: records can expire`);
    expect(sizeLine).toContain(fixCommand(bySize, 'retention.bytes=-1'));
    expect((await retentionOf(bySize))['retention.bytes']).toBe('1073741824');
  });

  it('refuses deleted history as unfixable, and lists every problem of a topic in one line', async () => {
    const topic = await existingTopic(2, { ...safeConfig, 'retention.ms': '604800000' });
    await produce(topic, 2, 3);
    await deleteRecordsBefore(topic, 1, 2);
    // A key on partition 2 does not fit the topic's 2 partitions: the config joins the list.
    const configPath = join(scratch, 'partition-2.json');
    const stockKeys = [{ item: 'widget', location: 'berlin', partition: 2, opening: 0, threshold: 0 }];
    writeFileSync(configPath, JSON.stringify({ ledger_origin: '2026-03-01', stock_keys: stockKeys }));

    const line = await refusal(['--namespace', 'ledger-1', '--topic', topic, '--config', configPath]);
    expect(line).toContain(`topic ${topic} cannot be adopted, 3 problems: (1) topic ${topic} has retention.ms=`);
    expect(line).toContain(fixCommand(topic, 'retention.ms=-1'));
    expect(line).toContain(`(2) ${topic}[1] starts at offset 2, not 0: records before it were deleted`);
    expect(line).toContain('the history before offset 2 on partition 1 is gone and amends cannot decide it');
    expect(line).toContain('adopting');
    expect(line).toContain('new namespace');
    expect(line).toContain(`(3) config file ${configPath}: stock_keys[0].partition`);
    expect(line).toContain('(topic has 2 partitions)');
    expect(line).toContain('nothing was changed');
    expect((await retentionOf(topic))['retention.ms']).toBe('604800000');
  });

  it('refuses a topic that does not exist, pointing at source-create', async () => {
    const topic = testName();
    ownTopics.add(topic);
    const line = await refusal(['--namespace', 'ledger-2', '--topic', topic]);
    expect(line).toBe(
      `amendsctl source-adopt: topic ${topic} does not exist on ${testBrokers}: source-adopt adopts an existing topic; amendsctl source-create --namespace ledger-2 --topic ${topic} creates a new one\n`,
    );
  });

  it('treats a bad topic name, a stray argument and a missing flag as usage errors (exit 2)', async () => {
    const bad = await runAmendsctl(['source-adopt', '--namespace', 'x', '--topic', 'a b'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not a legal Kafka topic name');
    expect((await runAmendsctl(['source-adopt', '--namespace', 'x', '--topic', 'y', 'extra'], env)).code).toBe(2);
    const missing = await runAmendsctl(['source-adopt', '--namespace', 'x'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--topic is required');
  });
});

describe('amendsctl source-adopt with AMENDS_DATABASE_URL set', () => {
  it('adopts silently; the manifest loads; a registered namespace is then refused', async () => {
    const topic = await existingTopic(2, safeConfig);
    const namespace = testName();
    const adopted = await runAmendsctl(['source-adopt', '--namespace', namespace, '--topic', topic], withDatabase);
    expect(adopted.stderr).toBe('');
    expect(adopted.code).toBe(0);
    // The rest of the tooling takes the adopted manifest: source-load publishes and registers.
    await registerByLoading(adopted.stdout, namespace, scratch, withDatabase);

    const again = await refusal(['--namespace', namespace, '--topic', topic], withDatabase);
    expect(again).toContain(`namespace ${namespace} is registered already`);
    expect(again).toContain(`amendsctl manifest-recover --namespace ${namespace}`);
  });
});
