/**
 * The 3-broker local cluster (issue 17, item 1): `scripts/stack.sh up --brokers 3` on private
 * ports and in a private directory (test/support/private-cluster.ts), then source-create
 * with --replication-factor 3 and output-create with the same, checked from the outside
 * with kafkajs' admin API: every partition of both topics has three replicas, all in sync,
 * and both topics carry min.insync.replicas=2 next to the retention settings. The single
 * layout refuses to start over the running cluster in one line. The cluster is stopped
 * afterwards (and its directory removed) whatever the outcome.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isOneLineDiagnostic, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testName } from '../support/endpoints.js';
import { twoKeysConfig } from '../support/fixture-stories.js';
import { clusterStartBudgetMs, type PrivateCluster, startPrivateCluster } from '../support/private-cluster.js';

let cluster: PrivateCluster | undefined;

function started(): PrivateCluster {
  if (!cluster) throw new Error('the private cluster did not start (see beforeAll)');
  return cluster;
}

interface TopicShape {
  partitions: { partition: number; replicas: number[]; isr: number[] }[];
  config: Record<string, string>;
}

/** Replicas, in-sync replicas and effective configuration, straight from the brokers. */
async function describeTopic(brokers: string[], topic: string): Promise<TopicShape> {
  const kafka = new kafkajs.Kafka({ brokers, logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    const configs = await admin.describeConfigs({
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic }],
      includeSynonyms: false,
    });
    const entries = configs.resources[0]?.configEntries ?? [];
    return {
      partitions: (metadata.topics[0]?.partitions ?? []).map((p) => ({
        partition: p.partitionId,
        replicas: [...p.replicas].sort(),
        isr: [...p.isr].sort(),
      })),
      config: Object.fromEntries(entries.map((e) => [e.configName, e.configValue])),
    };
  } finally {
    await admin.disconnect();
  }
}

async function listTopics(brokers: string[]): Promise<string[]> {
  const admin = new kafkajs.Kafka({ brokers, logLevel: kafkajs.logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    return await admin.listTopics();
  } finally {
    await admin.disconnect();
  }
}

function expectReplicatedThreeWays(shape: TopicShape, partitions: number): void {
  expect(shape.partitions.map((p) => p.partition).sort()).toEqual(Array.from({ length: partitions }, (_, i) => i));
  for (const p of shape.partitions) {
    expect(p.replicas).toEqual([1, 2, 3]);
    expect(p.isr).toEqual([1, 2, 3]);
  }
  expect(shape.config['min.insync.replicas']).toBe('2');
  expect(shape.config['cleanup.policy']).toBe('delete');
  expect(shape.config['retention.ms']).toBe('-1');
  expect(shape.config['retention.bytes']).toBe('-1');
}

beforeAll(async () => {
  requireBuild();
  cluster = await startPrivateCluster();
}, clusterStartBudgetMs + 10_000);

afterAll(async () => {
  await cluster?.stop();
}, 90_000);

describe('npm run up -- --brokers 3', () => {
  it('serves RF 3 topics with min.insync.replicas=2 from source-create and output-create', async () => {
    const { brokers, brokerList, databaseUrl } = started();
    const topic = testName();
    const namespace = testName();
    const env = { AMENDS_BROKERS: brokers, AMENDS_DATABASE_URL: databaseUrl };

    const source = await runAmendsctl(
      [
        'source-create',
        '--namespace',
        namespace,
        '--topic',
        topic,
        '--replication-factor',
        '3',
        '--config',
        twoKeysConfig,
      ],
      env,
    );
    expect(source.stderr).toBe('');
    expect(source.code).toBe(0);
    const manifestPath = join(started().stackDir, `${namespace}.manifest.json`);
    writeFileSync(manifestPath, source.stdout);

    const output = await runAmendsctl(
      ['output-create', '--manifest', manifestPath, '--topic', `${topic}-out`, '--replication-factor', '3'],
      env,
    );
    expect(output.stderr).toBe('');
    expect(output.code).toBe(0);
    expect(JSON.parse(output.stdout)).toMatchObject({ namespace, output_topic: `${topic}-out`, partitions: 2 });

    expectReplicatedThreeWays(await describeTopic(brokerList, topic), 2);
    expectReplicatedThreeWays(await describeTopic(brokerList, `${topic}-out`), 2);
  });

  it('refuses a floor above the replication factor before touching the cluster', async () => {
    const { brokers, databaseUrl } = started();
    const topic = testName();
    const result = await runAmendsctl(
      [
        'source-create',
        '--namespace',
        testName(),
        '--topic',
        topic,
        '--replication-factor',
        '3',
        '--min-insync-replicas',
        '4',
      ],
      { AMENDS_BROKERS: brokers, AMENDS_DATABASE_URL: databaseUrl },
    );
    expect(result.code).toBe(2);
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toMatch(/--min-insync-replicas must be an integer in \[1, 3\]/);
    expect(await listTopics(started().brokerList)).not.toContain(topic);
  });

  it('refuses to start the single broker over the running cluster, in one line', async () => {
    const result = await started().stack(['up']);
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toMatch(/^stack: the 3-broker cluster is up in .*: stop it first \(npm run down/);
  });
});
