/**
 * The 3-broker local cluster (issue 17, item 1): `scripts/stack.sh up --brokers 3` on private
 * ports and in a private directory (test/support/private-cluster.ts), then source-create
 * with --replication-factor 3 and output-create with the same, checked from the outside
 * with kafkajs' admin API: every partition of both topics has three replicas, all in sync,
 * and both topics carry min.insync.replicas=2 next to the retention settings. The single
 * layout refuses to start over the running cluster in one line. Under load, the leader of a
 * source partition is SIGKILLed and restarted: worker, relay and view (which ride through
 * broker outages, worker.md §6) stay up, and verify passes. The cluster is stopped
 * afterwards (and its directory removed) whatever the outcome.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaderOf } from '../../src/showcase/private-stack.js';
import { Prng } from '../simulation/prng.js';
import { isOneLineDiagnostic, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testName } from '../support/endpoints.js';
import { type ExclusiveHold, holdExclusive, privateClusterResource } from '../support/exclusive-resource.js';
import { twoKeysConfig } from '../support/fixture-stories.js';
import { ledgerChunk } from '../support/ledger-chunk.js';
import { clusterStartBudgetMs, type PrivateCluster, startPrivateCluster } from '../support/private-cluster.js';
import { type BoundSource, startAmends, stopAllAmends, TransportProbe } from '../support/transport-process.js';

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

async function withClusterAdmin<T>(brokers: string[], use: (admin: kafkajs.Admin) => Promise<T>): Promise<T> {
  const admin = new kafkajs.Kafka({ brokers, logLevel: kafkajs.logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}

function listTopics(brokers: string[]): Promise<string[]> {
  return withClusterAdmin(brokers, (admin) => admin.listTopics());
}

/** The high watermark of each partition, ascending (read_committed ends: the relay writes no transactions). */
async function topicEnds(brokers: string[], topic: string): Promise<number[]> {
  const offsets = await withClusterAdmin(brokers, (admin) => admin.fetchTopicOffsets(topic));
  return offsets.sort((a, b) => a.partition - b.partition).map((o) => Number(o.high));
}

const chunkKeys = [
  { item: 'widget', location: 'berlin' },
  { item: 'gadget', location: 'paris' },
];

/** source-load of `text` into the cluster; how many records it published. */
async function load(manifestPath: string, name: string, text: string): Promise<number> {
  const file = join(started().stackDir, `${name}.jsonl`);
  writeFileSync(file, text);
  const result = await runAmendsctl(['source-load', '--manifest', manifestPath, '--file', file], clusterEnv());
  if (result.code !== 0) throw new Error(`source-load ${name} exited ${result.code}: ${result.stderr}`);
  return text.split('\n').filter((l) => l !== '').length;
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

let turn: ExclusiveHold | undefined;
/** The chaos file's whole run, which holds the turn at the private cluster meanwhile. */
const chaosRunMaxMs = 240_000;

beforeAll(
  async () => {
    requireBuild();
    turn = await holdExclusive(privateClusterResource, chaosRunMaxMs);
    cluster = await startPrivateCluster();
  },
  chaosRunMaxMs + clusterStartBudgetMs + 10_000,
);

afterAll(async () => {
  try {
    await cluster?.stop();
  } finally {
    await turn?.release();
  }
}, 90_000);

describe('npm run up -- --brokers 3', () => {
  it('serves RF 3 topics with min.insync.replicas=2 from source-create and output-create', async () => {
    const { brokerList } = started();
    const { topic } = await createReplicated();
    expectReplicatedThreeWays(await describeTopic(brokerList, topic), 2);
    expectReplicatedThreeWays(await describeTopic(brokerList, `${topic}-out`), 2);
  });

  it('the source leader SIGKILLed under load: worker, relay and view stay up, nothing is lost, verify PASS', async () => {
    const { brokerList, databaseUrl } = started();
    const made = await createReplicated();
    const env = clusterEnv();
    const processes = [
      startAmends('worker', made.manifestPath, ['--batch-size', '20'], env),
      startAmends('relay', made.manifestPath, [], env),
      startAmends('view', made.manifestPath, [], env),
    ];
    const probe = new TransportProbe(databaseUrl);
    try {
      const prng = new Prng(23);
      let records = await load(made.manifestPath, 'A', ledgerChunk(prng, chunkKeys, 'A', 150));
      await probe.waitDecided(made.namespace, records, 60_000);
      const leader = await leaderOf(brokerList, made.topic, 0);
      const pid = Number(
        readFileSync(join(started().stackDir, 'kafka-cluster', `node-${leader}`, 'kafka.pid'), 'utf8'),
      );
      process.kill(pid, 'SIGKILL');
      records += await load(made.manifestPath, 'B', ledgerChunk(prng, chunkKeys, 'B', 150));
      const restarted = await started().stack(['up', '--brokers', '3'], clusterStartBudgetMs);
      expect(restarted.code, restarted.stderr).toBe(0);
      records += await load(made.manifestPath, 'C', ledgerChunk(prng, chunkKeys, 'C', 150));

      await probe.waitDecided(made.namespace, records, 90_000);
      const { total } = await probe.outbox(made.namespace);
      await probe.waitPublished(made.namespace, total, 60_000);
      const source = { namespace: made.namespace, outputTopic: `${made.topic}-out` } as BoundSource;
      await probe.waitViewCaughtUp(source, 60_000, await topicEnds(brokerList, `${made.topic}-out`));
      for (const p of processes) expect(p.exit, `${p.role}:\n${p.stderr.slice(-2000)}`).toBeUndefined();
      const exits = await Promise.all(processes.map((p) => p.stop('SIGTERM')));
      expect(exits.map((e) => e.code)).toEqual([0, 0, 0]);
      const verified = await runAmendsctl(['verify', '--manifest', made.manifestPath, '--json'], env);
      expect(verified.code, verified.stderr).toBe(0);
      expect((JSON.parse(verified.stdout) as { verdict: string }).verdict).toBe('PASS');
      const rides = processes.map((p) => `${p.role} ${p.logs.filter((l) => String(l.msg).endsWith('_outage')).length}`);
      console.log(
        `3-broker cluster: broker ${leader} (leader of partition 0) SIGKILLed under load; ${records} records, ${total} versions, outages ridden: ${rides.join(', ')}; verify PASS`,
      );
    } finally {
      await stopAllAmends();
      await probe.close();
    }
  }, 400_000);
});

function clusterEnv(): Record<string, string> {
  return { AMENDS_BROKERS: started().brokers, AMENDS_DATABASE_URL: started().databaseUrl };
}

/** source-create --replication-factor 3 and output-create on the cluster; the manifest in its directory. */
async function createReplicated(): Promise<{ topic: string; namespace: string; manifestPath: string }> {
  const topic = testName();
  const namespace = testName();
  const env = clusterEnv();
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
  return { topic, namespace, manifestPath };
}

describe('npm run up -- --brokers 3, refusals', () => {
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
