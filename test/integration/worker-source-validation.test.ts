/**
 * Source validation and broker coordinates through a real `amends worker` process
 * (worker.md §2, §5): every unsafe change of the source topic stops the worker with exit 1
 * and one diagnostic line naming what changed, after decisions only for valid offsets and
 * none after the change; odd raw keys are quarantined byte for byte; aborted transactions
 * and control records leave offset gaps that the frontier jumps, and a trailing control tail
 * is never committed as a cursor move. The adapter-level versions are in
 * kafka-source-observer.test.ts and kafka-source-consumer.test.ts.
 */

import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withKafkaAdmin } from '../../src/io/kafka/kafka-admin.js';
import { describeTopicConfig } from '../../src/io/kafka/topic-config.js';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';
import { testBrokers, testName } from '../support/endpoints.js';
import {
  addPartitions,
  alterTopicConfig,
  deleteRecordsBefore,
  sendWithKafkajs,
  TestProducer,
  type TestRecord,
} from '../support/kafka-source-fixtures.js';
import { createTestTopic, deleteTestTopics } from '../support/kafka-test-tools.js';
import {
  attempts,
  diagnostics,
  expectExportEqualsSimulateOf,
  expectFailedExit,
  type PlacedRecord,
  placed,
  post,
  stockKey,
  waitUntil,
} from '../support/worker-fault-harness.js';
import {
  amendsctl,
  createSource,
  StoreProbe,
  startWorker,
  stopAllWorkers,
  type TestSource,
  type WorkerProcess,
} from '../support/worker-process.js';

const topics = new Set<string>();
const probe = new StoreProbe();
let producer: TestProducer;
const twoKeysConfig = join(repoRoot, 'fixtures/two-keys.config.json');

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

/** `count` widget@berlin posts (distinct txns) for partition 0. */
function widgetPosts(count: number, prefix = 'T'): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    partition: 0,
    key: stockKey(),
    value: post(`${prefix}${i}`, 1, '2026-03-02', i + 1),
  }));
}

async function publish(source: TestSource, records: readonly TestRecord[]): Promise<PlacedRecord[]> {
  return placed(records, await producer.send(source.topic, records));
}

async function decided(source: TestSource): Promise<number[][]> {
  return [await probe.decisionOffsets(source.namespace, 0), await probe.decisionOffsets(source.namespace, 1)];
}

async function frontiers(source: TestSource): Promise<number[]> {
  return (await probe.partitions(source.namespace)).map((r) => r.frontier);
}

/** A worker that decides partition 0 up to `end` and is stopped cleanly (exit 0). */
async function runUntilDecided(source: TestSource, end: number): Promise<void> {
  const worker = startWorker({ manifestPath: source.manifestPath });
  await probe.waitForFrontiers(source.namespace, new Map([[0, end]]), 30_000);
  await expectCleanStop(worker);
}

async function expectCleanStop(worker: WorkerProcess): Promise<void> {
  const exit = await worker.stop('SIGTERM');
  expect({ code: exit.code, signal: exit.signal }, worker.tail()).toEqual({ code: 0, signal: null });
  expect(diagnostics(worker)).toEqual([]);
}

function partitionCount(topic: string): Promise<number | undefined> {
  return withKafkaAdmin(testBrokers, 'amends-test-describe', async (admin) => {
    const description = await admin.describeTopic(topic, 5_000);
    return description?.partitions;
  });
}

describe('amends worker: an unsafe source change stops it (exit 1, one diagnostic line, nothing decided after the change)', () => {
  it('the topic was deleted and created again with the same name while the worker was stopped: incarnation changed', async () => {
    const source = await createSource(topics);
    const records = await publish(source, widgetPosts(3));
    await runUntilDecided(source, 3);

    await deleteTestTopics([source.topic]);
    // The broker finishes a deletion asynchronously: creation fails until it has.
    await waitUntil(
      'the topic to be created again',
      () =>
        createTestTopic(source.topic, 2, { 'cleanup.policy': 'delete', 'retention.ms': '-1', 'retention.bytes': '-1' })
          .then(() => 'created')
          .catch((error: unknown) => String((error as Error).message ?? error)),
      (outcome) => outcome === 'created',
      30_000,
    );
    await publish(source, widgetPosts(5, 'N'));

    const worker = startWorker({ manifestPath: source.manifestPath });
    const diagnostic = await expectFailedExit(worker);
    expect(diagnostic).toMatch(/incarnation_changed: topic .* has UUID kafka:[0-9a-f]{32} but the manifest says/);
    expect(diagnostic).toContain('recreated');
    expect(attempts(worker)).toEqual([]);
    expect(await decided(source)).toEqual([[0, 1, 2], []]);
    expect(await frontiers(source)).toEqual([3, 0]);
    await expectExportEqualsSimulateOf(source, records);
  });

  it('partitions were added while the worker ran: partition count changed, the next record is not decided', async () => {
    const source = await createSource(topics);
    const records = await publish(source, widgetPosts(2));
    const worker = startWorker({ manifestPath: source.manifestPath });
    await probe.waitForFrontiers(source.namespace, new Map([[0, 2]]), 30_000);

    await addPartitions(source.topic, 3);
    await waitUntil(
      'the third partition',
      () => partitionCount(source.topic),
      (n) => n === 3,
    );
    await publish(source, widgetPosts(1, 'N'));

    const diagnostic = await expectFailedExit(worker);
    expect(diagnostic).toMatch(/partition_count_changed: topic .* has 3 partitions but the configuration says 2/);
    expect(await decided(source)).toEqual([[0, 1], []]);
    expect(await frontiers(source)).toEqual([2, 0]);
    await expectExportEqualsSimulateOf(source, records);
  });

  it('retained history was deleted on a partition whose frontier is 0: history deleted', async () => {
    const source = await createSource(topics);
    const records = await publish(source, widgetPosts(3));
    await runUntilDecided(source, 3);
    await publish(
      source,
      Array.from({ length: 4 }, (_, i) => ({
        partition: 1,
        key: stockKey(),
        value: post(`P${i}`, 1, '2026-03-02', 1),
      })),
    );
    await deleteRecordsBefore(source.topic, 1, 2);

    const worker = startWorker({ manifestPath: source.manifestPath });
    const diagnostic = await expectFailedExit(worker);
    expect(diagnostic).toMatch(/history_deleted: .*\[1\] starts at offset 2, not 0/);
    expect(attempts(worker)).toEqual([]);
    expect(await decided(source)).toEqual([[0, 1, 2], []]);
    expect(await frontiers(source)).toEqual([3, 0]);
    await expectExportEqualsSimulateOf(source, records);
  });

  it.each([
    {
      change: 'finite retention.ms',
      config: { 'cleanup.policy': 'delete', 'retention.ms': '86400000', 'retention.bytes': '-1' },
      diagnostic: /unsafe_retention: topic .* has retention\.ms=86400000, not -1/,
    },
    {
      change: 'cleanup.policy=compact',
      config: { 'cleanup.policy': 'compact', 'retention.ms': '-1', 'retention.bytes': '-1' },
      diagnostic: /unsafe_retention: topic .* has cleanup\.policy=compact/,
    },
  ])(
    '$change set while the worker ran: unsafe retention, the next record is not decided',
    async ({ config, diagnostic }) => {
      const source = await createSource(topics);
      const records = await publish(source, widgetPosts(2));
      const worker = startWorker({ manifestPath: source.manifestPath });
      await probe.waitForFrontiers(source.namespace, new Map([[0, 2]]), 30_000);

      await alterTopicConfig(source.topic, config);
      await waitUntil(
        'the new configuration to be effective',
        () => describeTopicConfig(testBrokers, source.topic, Object.keys(config)),
        (effective) => Object.entries(config).every(([name, value]) => effective[name] === value),
      );
      await publish(source, widgetPosts(1, 'N'));

      expect(await expectFailedExit(worker)).toMatch(diagnostic);
      expect(await decided(source)).toEqual([[0, 1], []]);
      expect(await frontiers(source)).toEqual([2, 0]);
      await expectExportEqualsSimulateOf(source, records);
    },
  );

  it('a PostgreSQL frontier beyond the read-committed end (set by an administrator): frontier beyond end', async () => {
    const source = await createSource(topics);
    const records = await publish(source, widgetPosts(3));
    await runUntilDecided(source, 3);
    // The row's last work must stay consistent with its frontier (a CHECK constraint): move both.
    await probe.pool.query(
      `UPDATE partitions SET frontier = 50, last_first_offset = 49, last_last_offset = 49, last_records = 1
        WHERE namespace = $1 AND partition = 0`,
      [source.namespace],
    );

    const worker = startWorker({ manifestPath: source.manifestPath });
    const diagnostic = await expectFailedExit(worker);
    expect(diagnostic).toMatch(/partition 0: .*frontier_beyond_end/);
    expect(attempts(worker)).toEqual([]);
    expect(await decided(source)).toEqual([[0, 1, 2], []]);
    expect(await frontiers(source)).toEqual([50, 0]);
    await expectExportEqualsSimulateOf(source, records);
  });
});

describe('amends worker: raw bytes and broker coordinates', () => {
  it('quarantines odd keys byte for byte (null, empty, invalid UTF-8, another partition’s key): export equals simulate', async () => {
    const source = await createSource(topics, twoKeysConfig);
    const widget = stockKey('widget', 'berlin');
    const gadget = stockKey('gadget', 'paris');
    const widgetPost = (txn: string) => post(txn, 1, '2026-03-02', -5);
    const gadgetPost = (txn: string) => post(txn, 1, '2026-03-02', 3, 'gadget', 'paris');
    const invalidUtf8 = Buffer.from([0xff, 0xfe, 0x80, 0x7b]);
    const sent: TestRecord[] = [
      { partition: 0, key: null, value: widgetPost('K1') },
      { partition: 0, key: Buffer.alloc(0), value: widgetPost('K2') },
      { partition: 0, key: invalidUtf8, value: widgetPost('K3') },
      { partition: 0, key: gadget, value: gadgetPost('K4') },
      { partition: 0, key: widget, value: widgetPost('K5') },
      { partition: 1, key: gadget, value: gadgetPost('G1') },
      { partition: 1, key: widget, value: widgetPost('K6') },
    ];
    // kafkajs, not librdkafka: librdkafka's producer writes an empty key as null (library-notes.md).
    await sendWithKafkajs(source.topic, sent);
    // One send to a fresh topic: offsets count from 0 per partition in send order.
    const next = [0, 0];
    const records: PlacedRecord[] = sent.map((r) => {
      const offset = next[r.partition] ?? 0;
      next[r.partition] = offset + 1;
      return { ...r, offset };
    });

    const worker = startWorker({ manifestPath: source.manifestPath, batchSize: 3 });
    await probe.waitForFrontiers(
      source.namespace,
      new Map([
        [0, 5],
        [1, 2],
      ]),
      30_000,
    );
    await expectCleanStop(worker);
    await expectExportEqualsSimulateOf(source, records);

    const quarantine = (await amendsctl(['export', '--manifest', source.manifestPath, '--what', 'quarantine']))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(
      quarantine.map(({ partition, offset, outcome, key_b64, value_b64 }) => ({
        partition,
        offset,
        outcome,
        key_b64,
        value_b64,
      })),
    ).toEqual([
      {
        partition: 0,
        offset: 0,
        outcome: 'KEY_MISMATCH',
        key_b64: null,
        value_b64: widgetPost('K1').toString('base64'),
      },
      { partition: 0, offset: 1, outcome: 'KEY_MISMATCH', key_b64: '', value_b64: widgetPost('K2').toString('base64') },
      {
        partition: 0,
        offset: 2,
        outcome: 'KEY_MISMATCH',
        key_b64: '//6Aew==',
        value_b64: widgetPost('K3').toString('base64'),
      },
      {
        partition: 0,
        offset: 3,
        outcome: 'ROUTING',
        key_b64: gadget.toString('base64'),
        value_b64: gadgetPost('K4').toString('base64'),
      },
      {
        partition: 1,
        offset: 1,
        outcome: 'ROUTING',
        key_b64: widget.toString('base64'),
        value_b64: widgetPost('K6').toString('base64'),
      },
    ]);
    // Each quarantine line carries its decision's fields, exactly as the decision export.
    const decisions = (await amendsctl(['export', '--manifest', source.manifestPath, '--what', 'decisions']))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const q of quarantine) {
      const { type: _q, key_b64: _k, value_b64: _v, detail: _d, ...fields } = q;
      const decision = decisions.find((d) => d.partition === q.partition && d.offset === q.offset);
      const { type: _t, ...decisionFields } = decision ?? {};
      expect(fields).toEqual(decisionFields);
    }
  });

  it('real aborted transactions: decisions exactly for the committed offsets, frontiers jump the gaps', async () => {
    const source = await createSource(topics);
    const txProducer = await TestProducer.open(testName('amends-test-tx'));
    let committed: PlacedRecord[] = [];
    let aborted: PlacedRecord[] = [];
    try {
      const inTransaction = async (records: TestRecord[], commit: boolean) => {
        await txProducer.beginTransaction();
        const offsets = await txProducer.send(source.topic, records);
        if (commit) await txProducer.commitTransaction();
        else await txProducer.abortTransaction();
        return placed(records, offsets);
      };
      const p1 = (txn: string) => ({ partition: 1, key: stockKey(), value: post(txn, 1, '2026-03-02', 1) });
      committed = await inTransaction([...widgetPosts(2, 'A'), p1('A9')], true);
      aborted = await inTransaction([...widgetPosts(2, 'B'), p1('B9')], false);
      committed.push(...(await inTransaction([...widgetPosts(1, 'C'), p1('C9')], true)));
    } finally {
      await txProducer.close();
    }
    const offsetsOf = (records: PlacedRecord[], partition: number) =>
      records.filter((r) => r.partition === partition).map((r) => r.offset);
    // Visible gaps: commit markers and the aborted records lie between the committed offsets.
    expect(offsetsOf(committed, 0)).toEqual([0, 1, 6]);
    expect(offsetsOf(aborted, 0)).toEqual([3, 4]);
    expect(offsetsOf(committed, 1)).toEqual([0, 4]);

    // One record per batch, so each commit's frontier shows the jump over its gap.
    const worker = startWorker({ manifestPath: source.manifestPath, batchSize: 1 });
    await probe.waitForFrontiers(
      source.namespace,
      new Map([
        [0, 7],
        [1, 5],
      ]),
      30_000,
    );
    await expectCleanStop(worker);
    expect(await decided(source)).toEqual([
      [0, 1, 6],
      [0, 4],
    ]);
    // Each batch (one record) moved the frontier to its offset + 1, jumping the gaps.
    expect(
      attempts(worker)
        .filter((a) => a.partition === 0)
        .map((a) => [a.first_offset, a.observation]),
    ).toEqual([
      [0, 'acknowledged'],
      [1, 'acknowledged'],
      [6, 'acknowledged'],
    ]);
    await expectExportEqualsSimulateOf(source, committed);
  });

  it('a trailing tail of control records and aborted data stays below the end across a restart', async () => {
    const source = await createSource(topics);
    const txProducer = await TestProducer.open(testName('amends-test-tx'));
    let committed: PlacedRecord[];
    try {
      await txProducer.beginTransaction();
      committed = placed(widgetPosts(2, 'A'), await txProducer.send(source.topic, widgetPosts(2, 'A')));
      await txProducer.commitTransaction();
      await txProducer.beginTransaction();
      await txProducer.send(source.topic, widgetPosts(2, 'B'));
      await txProducer.abortTransaction();
    } finally {
      await txProducer.close();
    }
    // Offsets 0-1 committed data, 2 commit marker, 3-4 aborted data, 5 abort marker: end 6.
    const readCommittedEnd = () =>
      withKafkaAdmin(testBrokers, 'amends-test-ends', (admin) =>
        admin.listOffsets(source.topic, [0], 'read-committed-end', 5_000),
      );
    expect((await readCommittedEnd()).get(0)).toBe(6);

    // One record per batch: the attempts name each decided offset.
    const first = startWorker({ manifestPath: source.manifestPath, batchSize: 1 });
    await probe.waitForFrontiers(source.namespace, new Map([[0, 2]]), 30_000);
    // No positive signal exists for "fetched the tail and decided nothing": give the poll loop
    // (250 ms polls) a second, then check that nothing moved and the worker still runs.
    await sleep(1_000);
    expect(first.exitStatus).toBeUndefined();
    expect(await frontiers(source)).toEqual([2, 0]);
    expect(attempts(first).map((a) => a.last_offset)).toEqual([0, 1]);
    await expectCleanStop(first);
    const epochBefore = (await probe.partitions(source.namespace))[0]?.epoch;

    const instanceId = testName('tail-restart');
    const second = startWorker({ manifestPath: source.manifestPath, instanceId });
    await waitUntil(
      'the restarted worker to own partition 0',
      async () => (await probe.partitions(source.namespace))[0]?.epoch,
      (epoch) => epoch !== undefined && epoch > (epochBefore ?? 0),
    );
    await sleep(1_000);
    expect(second.exitStatus).toBeUndefined();
    expect(attempts(second)).toEqual([]);
    expect(diagnostics(second)).toEqual([]);
    expect(await frontiers(source)).toEqual([2, 0]);
    expect(await decided(source)).toEqual([[0, 1], []]);

    // A committed record after the tail is decided at its real offset: the tail was read past, not decided.
    const [sentinel] = await publish(source, widgetPosts(1, 'S'));
    expect(sentinel?.offset).toBe(6);
    await probe.waitForFrontiers(source.namespace, new Map([[0, 7]]), 15_000);
    await expectCleanStop(second);
    expect(attempts(second).map((a) => [a.first_offset, a.observation])).toEqual([[6, 'acknowledged']]);
    expect(await decided(source)).toEqual([[0, 1, 6], []]);
    await expectExportEqualsSimulateOf(source, [...committed, sentinel as PlacedRecord]);
  });
});
