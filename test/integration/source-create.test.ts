/**
 * `amendsctl source-create` against the real broker, run as the built binary.
 * Every topic a test names is deleted in afterAll, whether the command created it or not.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incarnationFromTopicId } from '../../src/io/kafka/topic-incarnation.js';
import { isOneLineDiagnostic, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { rawTopicMetadata } from '../support/kafka-raw-metadata.js';
import {
  createTestTopic,
  deleteTestTopics,
  describeTestTopicConfig,
  topicExists,
} from '../support/kafka-test-tools.js';
import { registerByLoading } from '../support/namespace-registration.js';

const ownTopics = new Set<string>();
const scratch = mkdtempSync(join(tmpdir(), 'amends-test-source-create-'));
const env = { AMENDS_BROKERS: testBrokers };

/** The one stderr line source-create prints when it has no database to check against. */
function skippedNote(namespace: string): string {
  return `amendsctl source-create: AMENDS_DATABASE_URL is not set: did not check whether namespace ${namespace} is registered already\n`;
}

function topicName(): string {
  const topic = testName();
  ownTopics.add(topic);
  return topic;
}

beforeAll(() => requireBuild());
afterAll(async () => {
  await deleteTestTopics(ownTopics);
});

describe('amendsctl source-create', () => {
  it('creates the topic with delete-only unlimited retention and prints the manifest with its UUID', async () => {
    const topic = topicName();
    const namespace = testName();
    const result = await runAmendsctl(['source-create', '--namespace', namespace, '--topic', topic], env);
    expect(result.stderr).toBe(skippedNote(namespace));
    expect(result.code).toBe(0);

    const manifest = JSON.parse(result.stdout);
    expect(manifest).toEqual({
      source_topic: topic,
      config: {
        namespace,
        schema_version: 1,
        ledger_origin: '2026-03-01',
        partitions: 2,
        stock_keys: [{ item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 }],
        source_incarnation: expect.stringMatching(/^kafka:[0-9a-f]{32}$/),
      },
    });

    const config = await describeTestTopicConfig(topic);
    expect(config['cleanup.policy']).toBe('delete');
    expect(config['retention.ms']).toBe('-1');
    expect(config['retention.bytes']).toBe('-1');

    // The incarnation is the broker's topic UUID, read here with a hand-built Metadata request.
    const raw = await rawTopicMetadata(testBrokers, topic);
    expect(raw.errorCode).toBe(0);
    expect(raw.partitions).toBe(2);
    expect(manifest.config.source_incarnation).toBe(`kafka:${raw.topicIdHex}`);
  });

  it('honours --partitions and --config', async () => {
    const topic = topicName();
    const configPath = join(scratch, 'two-keys.json');
    const stockKeys = [
      { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
      { item: 'gadget', location: 'paris', partition: 2, opening: -5, threshold: 0 },
    ];
    writeFileSync(configPath, JSON.stringify({ ledger_origin: '2026-01-31', stock_keys: stockKeys }));
    const result = await runAmendsctl(
      ['source-create', '--namespace', 'two-keys', '--topic', topic, '--partitions', '3', '--config', configPath],
      env,
    );
    expect(result.stderr).toBe(skippedNote('two-keys'));
    expect(result.code).toBe(0);
    const manifest = JSON.parse(result.stdout);
    expect(manifest.config).toMatchObject({ partitions: 3, ledger_origin: '2026-01-31', stock_keys: stockKeys });
    expect((await rawTopicMetadata(testBrokers, topic)).partitions).toBe(3);
  });

  it('refuses an existing topic and leaves it untouched', async () => {
    const topic = topicName();
    await createTestTopic(topic, 1, { 'retention.ms': '86400000' });
    const before = await rawTopicMetadata(testBrokers, topic);

    const result = await runAmendsctl(['source-create', '--namespace', 'adopt-me', '--topic', topic], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toContain(`topic ${topic} already exists`);
    expect(result.stderr).toContain(`amendsctl source-adopt --namespace adopt-me --topic ${topic}`);

    const after = await rawTopicMetadata(testBrokers, topic);
    expect(after).toEqual(before);
    expect((await describeTestTopicConfig(topic))['retention.ms']).toBe('86400000');
  });

  it('rejects a bad namespace as a usage error before creating anything', async () => {
    const topic = topicName();
    const result = await runAmendsctl(['source-create', '--namespace', 'Bad_Name', '--topic', topic], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--namespace');
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(await topicExists(topic)).toBe(false);
  });

  it('rejects an invalid configuration file before creating anything', async () => {
    const topic = topicName();
    const configPath = join(scratch, 'bad-partition.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        ledger_origin: '2026-02-30',
        stock_keys: [{ item: 'widget', location: 'berlin', partition: 2, opening: 0, threshold: 0 }],
      }),
    );
    const result = await runAmendsctl(
      ['source-create', '--namespace', 'bad-config', '--topic', topic, '--config', configPath],
      env,
    );
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toContain('ledger_origin');
    expect(result.stderr).toContain('stock_keys[0].partition');
    expect(await topicExists(topic)).toBe(false);

    const notJson = join(scratch, 'not-json.json');
    writeFileSync(notJson, '{"ledger_origin": ');
    const second = await runAmendsctl(
      ['source-create', '--namespace', 'bad-config', '--topic', topic, '--config', notJson],
      env,
    );
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('not valid JSON');
    expect(await topicExists(topic)).toBe(false);
  });

  it('treats an unknown flag and a missing required flag as usage errors (exit 2)', async () => {
    const unknown = await runAmendsctl(['source-create', '--namespace', 'x', '--topic', 'y', '--bogus'], env);
    expect(unknown.code).toBe(2);
    const missing = await runAmendsctl(['source-create', '--namespace', 'x'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--topic is required');
    const badPartitions = await runAmendsctl(
      ['source-create', '--namespace', 'x', '--topic', 'y', '--partitions', '0'],
      env,
    );
    expect(badPartitions.code).toBe(2);
  });
});

describe('amendsctl source-create with AMENDS_DATABASE_URL set', () => {
  const withDatabase = { ...env, AMENDS_DATABASE_URL: testDatabaseUrl };

  it('refuses a registered namespace before creating anything, naming manifest-recover', async () => {
    const first = topicName();
    const namespace = testName();
    const created = await runAmendsctl(['source-create', '--namespace', namespace, '--topic', first], withDatabase);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    // source-load registers the namespace (its first use of the database).
    await registerByLoading(created.stdout, namespace, scratch, withDatabase);

    const second = topicName();
    const again = await runAmendsctl(['source-create', '--namespace', namespace, '--topic', second], withDatabase);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(isOneLineDiagnostic(again.stderr), again.stderr).toBe(true);
    expect(again.stderr).toContain(`namespace ${namespace} is registered already`);
    expect(again.stderr).toContain(`amendsctl manifest-recover --namespace ${namespace}`);
    expect(await topicExists(second)).toBe(false);
  });

  it('creates the topic for a namespace the database does not know, saying nothing on stderr', async () => {
    const topic = topicName();
    const result = await runAmendsctl(['source-create', '--namespace', testName(), '--topic', topic], withDatabase);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(await topicExists(topic)).toBe(true);
  });
});

describe('topic incarnation', () => {
  it('reads the signed 64-bit halves big-endian, as the library base64 of the same UUID says', () => {
    // Observed from @confluentinc/kafka-javascript 1.10.1 describeTopics on Kafka 4.1: both halves negative.
    const topicId = { mostSignificantBits: -716748977722798677n, leastSignificantBits: -7848143352534535978n };
    const fromBase64 = Buffer.from('9g2Ymi21TauTFcszvdXw1g', 'base64').toString('hex');
    expect(incarnationFromTopicId(topicId)).toBe(`kafka:${fromBase64}`);
    expect(incarnationFromTopicId({ mostSignificantBits: 1n, leastSignificantBits: -1n })).toBe(
      `kafka:${'0'.repeat(15)}1${'f'.repeat(16)}`,
    );
  });
});
