/**
 * The source observer against the real broker (worker.md §2): a fresh topic is valid with its
 * bounds; a recreated topic, added partitions, finite retention, compaction and deleted history
 * are each reported with what changed; an open transaction holds the read-committed end below
 * the high watermark; a cancelled observation rejects at once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { sourceTopicConfig } from '../../src/cli/commands/source-create.js';
import { type TopicDescription, withKafkaAdmin } from '../../src/io/kafka/kafka-admin.js';
import { KafkaSourceObserver } from '../../src/io/kafka/kafka-source-observer.js';
import { servesEveryPartition } from '../../src/io/kafka/safe-topic.js';
import { testBrokers, testName } from '../support/endpoints.js';
import {
  addPartitions,
  alterTopicConfig,
  deleteRecordsBefore,
  eventually,
  numberedRecords,
  TestProducer,
} from '../support/kafka-source-fixtures.js';
import { deleteTestTopics, endOffsets } from '../support/kafka-test-tools.js';

const topics = new Set<string>();
const observers: KafkaSourceObserver[] = [];

afterAll(async () => {
  await Promise.all(observers.map((o) => o.close()));
  await deleteTestTopics(topics);
});

/** A source topic made the way source-create makes it: the project's settings, via kafka-admin.ts. */
async function createSourceTopic(topic = testName(), partitions = 2): Promise<TopicDescription> {
  topics.add(topic);
  return withKafkaAdmin(testBrokers, 'amends-test-source-create', async (admin) => {
    const creation = await admin.createTopic({
      topic,
      partitions,
      replicationFactor: 1,
      config: { ...sourceTopicConfig },
    });
    expect(creation).toEqual({ outcome: 'created' });
    let description: TopicDescription | undefined;
    // Visible and led: the observer's first offset list must not meet "not leader".
    await eventually(`topic ${topic} visible with a leader for every partition`, async () => {
      description = await admin.describeTopic(topic);
      return description !== undefined && (await servesEveryPartition(admin, topic, partitions));
    });
    return description as TopicDescription;
  });
}

async function observerFor(description: TopicDescription, partitions = 2): Promise<KafkaSourceObserver> {
  const observer = await KafkaSourceObserver.open({
    brokers: testBrokers,
    topic: description.topic,
    incarnation: description.incarnation,
    partitions,
  });
  observers.push(observer);
  return observer;
}

const never = new AbortController().signal;

describe('kafka source observer', () => {
  it('reports a fresh topic with records as valid, with each partition bounds, quickly', async () => {
    const description = await createSourceTopic();
    const producer = await TestProducer.open();
    try {
      await producer.send(description.topic, [...numberedRecords(0, 3), ...numberedRecords(1, 5)]);
    } finally {
      await producer.close();
    }
    const observer = await observerFor(description);

    expect(await observer.observe([0, 1], never)).toEqual({
      valid: true,
      bounds: [
        { partition: 0, retainedStart: 0, readCommittedEnd: 3 },
        { partition: 1, retainedStart: 0, readCommittedEnd: 5 },
      ],
    });
    expect(await observer.observe([1], never)).toEqual({
      valid: true,
      bounds: [{ partition: 1, retainedStart: 0, readCommittedEnd: 5 }],
    });
    expect(await observer.observe([], never)).toEqual({ valid: true, bounds: [] });

    // The worker observes after every non-empty poll: one observation is one round trip.
    const samples: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      await observer.observe([0, 1], never);
      samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    const median = samples[Math.floor(samples.length / 2)] ?? Number.NaN;
    const p90 = samples[Math.floor(samples.length * 0.9)] ?? Number.NaN;
    console.info(`observe latency over 50 calls: median ${median.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms`);
    expect(median).toBeLessThan(20);
  });

  it('rejects a partition outside the configuration, and observes nothing once closed', async () => {
    const description = await createSourceTopic();
    const observer = await KafkaSourceObserver.open({
      brokers: testBrokers,
      topic: description.topic,
      incarnation: description.incarnation,
      partitions: 2,
    });
    await expect(observer.observe([2], never)).rejects.toThrow(/partitions 0\.\.1/);
    await observer.close();
    await expect(observer.observe([0], never)).rejects.toThrow(/closed/);
  });

  it('says incarnation_changed when the topic was deleted and created again under the same name', async () => {
    const original = await createSourceTopic();
    const observer = await observerFor(original);
    expect((await observer.observe([0, 1], never)).valid).toBe(true);

    await deleteTestTopics([original.topic]);
    const deleted = await observer.observe([0, 1], never);
    expect(deleted).toMatchObject({ valid: false, reason: 'incarnation_changed' });
    expect(deleted.valid === false && deleted.detail).toContain('does not exist');

    // Topic deletion completes asynchronously on the controller: retry the creation briefly.
    let recreated: TopicDescription | undefined;
    await eventually(`topic ${original.topic} recreated`, async () => {
      recreated = await createSourceTopic(original.topic).catch(() => undefined);
      return recreated !== undefined;
    });
    expect(recreated?.incarnation).not.toBe(original.incarnation);
    const observation = await observer.observe([0, 1], never);
    expect(observation).toEqual({
      valid: false,
      reason: 'incarnation_changed',
      detail: `topic ${original.topic} has UUID ${recreated?.incarnation} but the manifest says ${original.incarnation}: the topic was recreated`,
    });
  });

  it('says partition_count_changed when partitions were added', async () => {
    const description = await createSourceTopic();
    const observer = await observerFor(description);
    await addPartitions(description.topic, 3);
    await eventually('three partitions in metadata', async () => {
      const o = await observer.observe([0, 1], never);
      return !o.valid;
    });
    expect(await observer.observe([0, 1], never)).toEqual({
      valid: false,
      reason: 'partition_count_changed',
      detail: `topic ${description.topic} has 3 partitions but the configuration says 2: partitions were added`,
    });
  });

  it('says unsafe_retention for a finite retention.ms, and for compaction', async () => {
    const description = await createSourceTopic();
    const observer = await observerFor(description);

    await alterTopicConfig(description.topic, {
      'cleanup.policy': 'delete',
      'retention.ms': '86400000',
      'retention.bytes': '-1',
    });
    expect(await observer.observe([0], never)).toEqual({
      valid: false,
      reason: 'unsafe_retention',
      detail: `topic ${description.topic} has retention.ms=86400000, not -1: records can expire`,
    });

    await alterTopicConfig(description.topic, {
      'cleanup.policy': 'compact',
      'retention.ms': '-1',
      'retention.bytes': '-1',
    });
    expect(await observer.observe([0], never)).toEqual({
      valid: false,
      reason: 'unsafe_retention',
      detail: `topic ${description.topic} has cleanup.policy=compact: compaction can remove records`,
    });

    await alterTopicConfig(description.topic, {
      'cleanup.policy': 'delete',
      'retention.ms': '-1',
      'retention.bytes': '1073741824',
    });
    expect(await observer.observe([0], never)).toMatchObject({
      valid: false,
      reason: 'unsafe_retention',
      detail: expect.stringContaining('retention.bytes=1073741824'),
    });

    await alterTopicConfig(description.topic, { ...sourceTopicConfig });
    expect((await observer.observe([0], never)).valid).toBe(true);
  });

  it('says history_deleted when records before the frontier were deleted', async () => {
    const description = await createSourceTopic();
    const producer = await TestProducer.open();
    try {
      await producer.send(description.topic, numberedRecords(1, 4));
    } finally {
      await producer.close();
    }
    const observer = await observerFor(description);
    await deleteRecordsBefore(description.topic, 1, 2);
    expect(await observer.observe([0, 1], never)).toEqual({
      valid: false,
      reason: 'history_deleted',
      detail: `${description.topic}[1] starts at offset 2, not 0: records before it were deleted`,
    });
    // Only the requested partitions are judged: partition 0 still starts at 0.
    expect(await observer.observe([0], never)).toEqual({
      valid: true,
      bounds: [{ partition: 0, retainedStart: 0, readCommittedEnd: 0 }],
    });
  });

  it('holds the read-committed end below the high watermark while a transaction is open', async () => {
    const description = await createSourceTopic();
    const topic = description.topic;
    const observer = await observerFor(description);
    const plain = await TestProducer.open();
    const transactional = await TestProducer.open(`amends-test-tx-${testName()}`);
    try {
      await plain.send(topic, numberedRecords(0, 2, 'before')); // offsets 0, 1
      await transactional.beginTransaction();
      await transactional.send(topic, numberedRecords(0, 3, 'open')); // offsets 2, 3, 4: not yet committed

      const [highWatermark] = await endOffsets(topic, 1);
      expect(highWatermark).toBe(5);
      expect(await observer.observe([0], never)).toEqual({
        valid: true,
        bounds: [{ partition: 0, retainedStart: 0, readCommittedEnd: 2 }],
      });

      // Aborted: offsets 2..4 hold aborted data, offset 5 the abort marker (a control record).
      await transactional.abortTransaction();
      await eventually('the abort marker written', async () => (await endOffsets(topic, 1))[0] === 6);
      expect(await observer.observe([0], never)).toEqual({
        valid: true,
        bounds: [{ partition: 0, retainedStart: 0, readCommittedEnd: 6 }],
      });
    } finally {
      await transactional.close();
      await plain.close();
    }
  });

  it('rejects at once when the signal fires, without leaving anything behind', async () => {
    const description = await createSourceTopic();
    const observer = await observerFor(description);
    const already = AbortSignal.abort();
    await expect(observer.observe([0], already)).rejects.toThrow();

    const controller = new AbortController();
    const pending = observer.observe([0, 1], controller.signal);
    controller.abort();
    const started = performance.now();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - started).toBeLessThan(5);
    // The abandoned requests finish on their own; the observer stays usable.
    expect((await observer.observe([0, 1], never)).valid).toBe(true);
  });
});
