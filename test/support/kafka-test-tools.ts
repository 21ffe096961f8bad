/**
 * Broker operations the integration tests need around the code under test: making and
 * deleting their own topics, their configuration, end offsets, reading records back,
 * describing a consumer group. Straight librdkafka (and, for DescribeGroups and
 * DescribeConfigs, kafkajs) calls, not amends' adapters, so a test does not check amends
 * with amends.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RdKafka } from '@confluentinc/kafka-javascript';
import kafkajs from 'kafkajs';
import { testBrokers } from './endpoints.js';
import { rawTopicMetadata } from './kafka-raw-metadata.js';

const timeoutMs = 10_000;

function call<T>(start: (done: (error: unknown, result?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => start((e, r) => (e ? reject(e) : resolve(r as T))));
}

export async function withTestAdmin<T>(use: (admin: RdKafka.IAdminClient) => Promise<T>): Promise<T> {
  const admin = RdKafka.AdminClient.create({ 'bootstrap.servers': testBrokers, 'client.id': 'amends-test-admin' });
  try {
    return await use(admin);
  } finally {
    admin.disconnect();
  }
}

export function createTestTopic(topic: string, partitions: number, config: Record<string, string> = {}): Promise<void> {
  return withTestAdmin((admin) =>
    call<void>((done) =>
      admin.createTopic({ topic, num_partitions: partitions, replication_factor: 1, config }, timeoutMs, done),
    ),
  );
}

/** Deletes the given topics (only ever the test's own); a topic that is already gone is fine. */
export function deleteTestTopics(topics: Iterable<string>): Promise<void> {
  return withTestAdmin(async (admin) => {
    for (const topic of topics) {
      await call<void>((done) => admin.deleteTopic(topic, timeoutMs, done)).catch((error: { code?: number }) => {
        if (error.code !== RdKafka.CODES.ERRORS.ERR_UNKNOWN_TOPIC_OR_PART) throw error;
      });
    }
  });
}

/**
 * The topic's effective configuration (`names`, or every entry) via kafkajs' DescribeConfigs:
 * amends reads it through its own adapter (topic-config.ts), so a test reads it apart.
 */
export async function describeTestTopicConfig(topic: string, names?: string[]): Promise<Record<string, string>> {
  const kafka = new kafkajs.Kafka({ brokers: testBrokers.split(','), logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const response = await admin.describeConfigs({
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, ...(names ? { configNames: names } : {}) }],
      includeSynonyms: false,
    });
    return Object.fromEntries(response.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
  } finally {
    await admin.disconnect();
  }
}

/** Whether the broker knows the topic. */
export function topicExists(topic: string): Promise<boolean> {
  return withTestAdmin(async (admin) => {
    const [d] = await call<RdKafka.TopicDescription[]>((done) =>
      admin.describeTopics([topic], { timeout: timeoutMs }, done),
    );
    return d !== undefined && d.error === undefined;
  });
}

/** The log end offset of each partition 0..partitions-1. */
export function endOffsets(topic: string, partitions: number): Promise<number[]> {
  return withTestAdmin(async (admin) => {
    const result = await call<RdKafka.ListOffsetsResult[]>((done) =>
      admin.listOffsets(
        Array.from({ length: partitions }, (_, partition) => ({
          topic,
          partition,
          offset: RdKafka.OffsetSpec.LATEST,
        })),
        { timeout: timeoutMs },
        done,
      ),
    );
    return result.sort((a, b) => a.partition - b.partition).map((r) => r.offset);
  });
}

export interface ReadRecord {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
}

/** Reads exactly `count` records of one partition from offset 0 (assign, no group membership). */
export async function readPartition(topic: string, partition: number, count: number): Promise<ReadRecord[]> {
  const consumer = new RdKafka.KafkaConsumer(
    {
      'bootstrap.servers': testBrokers,
      'group.id': `amends-test-reader-${process.pid}-${Date.now()}`,
      'enable.auto.commit': false,
      'enable.partition.eof': false,
    },
    { 'auto.offset.reset': 'earliest' },
  );
  await call((done) => consumer.connect({ timeout: timeoutMs }, done));
  try {
    consumer.assign([{ topic, partition, offset: 0 }]);
    const records: ReadRecord[] = [];
    const deadline = Date.now() + timeoutMs;
    while (records.length < count && Date.now() < deadline) {
      const batch = await call<RdKafka.Message[]>((done) => consumer.consume(count - records.length, done));
      for (const m of batch) {
        records.push({ partition: m.partition, offset: m.offset, key: (m.key as Buffer) ?? null, value: m.value });
      }
    }
    return records;
  } finally {
    await call((done) => consumer.disconnect(done)).catch(() => {});
  }
}

/**
 * Joins consumer group `groupId` on `topic` as static member `instanceId` until the group
 * assigns it partitions, then disconnects (a static member's close does not leave the group).
 * A live member with the same instance id is fenced by the broker (FENCED_INSTANCE_ID).
 * Returns whether the group assigned it within the budget.
 */
export async function joinAsStaticMember(groupId: string, instanceId: string, topic: string): Promise<boolean> {
  let assigned = false;
  const consumer = new RdKafka.KafkaConsumer(
    {
      'bootstrap.servers': testBrokers,
      'group.id': groupId,
      'group.instance.id': instanceId,
      'enable.auto.commit': false,
      'partition.assignment.strategy': 'range',
      rebalance_cb: function (
        this: RdKafka.KafkaConsumer,
        error: RdKafka.LibrdKafkaError,
        partitions: RdKafka.Assignment[],
      ) {
        if (error.code === RdKafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
          this.assign(partitions);
          assigned = true;
        } else this.unassign();
      },
    },
    { 'auto.offset.reset': 'latest' },
  );
  await call((done) => consumer.connect({ timeout: timeoutMs }, done));
  try {
    consumer.subscribe([topic]);
    const deadline = Date.now() + timeoutMs;
    // The join happens inside consume(); its answer (records or none) does not matter here.
    while (!assigned && Date.now() < deadline) await call((done) => consumer.consume(1, done)).catch(() => {});
    return assigned;
  } finally {
    await call((done) => consumer.disconnect(done)).catch(() => {});
  }
}

/** A consumer group as the broker describes it (state, members), via kafkajs' DescribeGroups. */
export async function describeTestGroup(groupId: string): Promise<kafkajs.GroupDescription | undefined> {
  const kafka = new kafkajs.Kafka({
    brokers: testBrokers.split(','),
    clientId: 'amends-test-describe-group',
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([groupId]);
    return groups[0];
  } finally {
    await admin.disconnect();
  }
}

/**
 * Creates `topic` again after a deletion (the controller may still be finishing it) and waits
 * until its new UUID shows in metadata; returns the new incarnation (`kafka:` + UUID).
 */
export async function recreateTestTopic(topic: string, partitions: number): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await createTestTopic(topic, partitions);
      break;
    } catch (error) {
      // A deletion may still be completing on the controller.
      if (Date.now() > deadline) throw error;
      await sleep(200);
    }
  }
  for (;;) {
    const raw = await rawTopicMetadata(testBrokers, topic);
    if (raw.errorCode === 0 && /[1-9a-f]/.test(raw.topicIdHex)) return `kafka:${raw.topicIdHex}`;
    if (Date.now() > deadline) throw new Error(`recreated topic ${topic} has no UUID in metadata`);
    await sleep(200);
  }
}
