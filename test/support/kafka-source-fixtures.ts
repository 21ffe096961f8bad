/**
 * Source-topic situations for the worker's Kafka adapters (worker.md §2): records written
 * plainly or inside transactions (committed, aborted, left open), partitions added, history
 * deleted, retention changed. Straight client calls, not amends' adapters.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RdKafka } from '@confluentinc/kafka-javascript';
import kafkajs from 'kafkajs';
import { testBrokers } from './endpoints.js';

const timeoutMs = 10_000;

function call<T>(start: (done: (error: unknown, result?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => start((e, r) => (e ? reject(e) : resolve(r as T))));
}

export interface TestRecord {
  partition: number;
  key: Buffer | null;
  value: Buffer | null;
}

/** A producer for the tests' records; `transactionalId` makes it transactional. */
export class TestProducer {
  private constructor(private readonly producer: RdKafka.Producer) {}

  static async open(transactionalId?: string): Promise<TestProducer> {
    const producer = new RdKafka.Producer({
      'bootstrap.servers': testBrokers,
      'client.id': 'amends-test-producer',
      'enable.idempotence': true,
      'linger.ms': 0,
      dr_cb: true,
      ...(transactionalId === undefined ? {} : { 'transactional.id': transactionalId }),
    });
    await call((done) => producer.connect({ timeout: timeoutMs }, done));
    producer.setPollInterval(20);
    if (transactionalId !== undefined) await call<void>((done) => producer.initTransactions(timeoutMs, done));
    return new TestProducer(producer);
  }

  /** Produces and waits for every delivery report; returns the offsets in order. */
  async send(topic: string, records: readonly TestRecord[]): Promise<number[]> {
    const offsets: number[] = new Array(records.length);
    let pending = records.length;
    if (pending === 0) return [];
    const delivered = new Promise<void>((resolve, reject) => {
      const onReport = (error: unknown, report: RdKafka.DeliveryReport) => {
        if (report.topic !== topic) return;
        const index = report.opaque as number;
        if (error) {
          this.producer.off('delivery-report', onReport);
          reject(error);
          return;
        }
        offsets[index] = report.offset;
        pending -= 1;
        if (pending === 0) {
          this.producer.off('delivery-report', onReport);
          resolve();
        }
      };
      this.producer.on('delivery-report', onReport);
    });
    records.forEach((r, index) => {
      this.producer.produce(topic, r.partition, r.value, r.key, null, index);
    });
    await delivered;
    return offsets;
  }

  async beginTransaction(): Promise<void> {
    await call<void>((done) => this.producer.beginTransaction(done));
  }

  async commitTransaction(): Promise<void> {
    await call<void>((done) => this.producer.commitTransaction(timeoutMs, done));
  }

  async abortTransaction(): Promise<void> {
    await call<void>((done) => this.producer.abortTransaction(timeoutMs, done));
  }

  async close(): Promise<void> {
    await call((done) => this.producer.flush(timeoutMs, done)).catch(() => {});
    await call((done) => this.producer.disconnect(timeoutMs, done)).catch(() => {});
  }
}

/** `count` records on one partition with distinct keys and values `<prefix>-<i>`. */
export function numberedRecords(partition: number, count: number, prefix = 'record'): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    partition,
    key: Buffer.from(`${prefix}-key-${partition}-${i}`),
    value: Buffer.from(`${prefix}-value-${partition}-${i}`),
  }));
}

async function withAdmin<T>(use: (admin: RdKafka.IAdminClient) => Promise<T>): Promise<T> {
  const admin = RdKafka.AdminClient.create({ 'bootstrap.servers': testBrokers, 'client.id': 'amends-test-admin' });
  try {
    return await use(admin);
  } finally {
    admin.disconnect();
  }
}

/** Grows the topic to `total` partitions (librdkafka-style AdminClient only: library-notes.md). */
export function addPartitions(topic: string, total: number): Promise<void> {
  return withAdmin((admin) => call<void>((done) => admin.createPartitions(topic, total, timeoutMs, done)));
}

/** Deletes the records of one partition before `offset` (the log start offset becomes `offset`). */
export function deleteRecordsBefore(topic: string, partition: number, offset: number): Promise<void> {
  return withAdmin(async (admin) => {
    await call((done) => admin.deleteRecords([{ topic, partition, offset }], { timeout: timeoutMs }, done));
  });
}

/**
 * Sets the topic's configuration through kafkajs (AlterConfigs, not the incremental kind: every
 * override not named here returns to the broker default, so name all of them).
 */
export async function alterTopicConfig(topic: string, entries: Record<string, string>): Promise<void> {
  const kafka = new kafkajs.Kafka({
    brokers: testBrokers.split(','),
    clientId: 'amends-test-alter-config',
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: kafkajs.ConfigResourceTypes.TOPIC,
          name: topic,
          configEntries: Object.entries(entries).map(([name, value]) => ({ name, value })),
        },
      ],
    });
  } finally {
    await admin.disconnect();
  }
}

/** Waits until `check` returns true (polling every 100 ms), or fails after `budgetMs`. */
export async function eventually(what: string, check: () => Promise<boolean>, budgetMs = 10_000): Promise<void> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${budgetMs} ms`);
    await sleep(100);
  }
}

/**
 * Commits `offset` for the group on one partition, as a monitoring commit would: a plain
 * consumer with the group id, manual assignment (no join), a synchronous commit.
 */
export async function commitGroupOffset(
  groupId: string,
  topic: string,
  partition: number,
  offset: number,
): Promise<void> {
  const consumer = new RdKafka.KafkaConsumer(
    { 'bootstrap.servers': testBrokers, 'group.id': groupId, 'enable.auto.commit': false },
    {},
  );
  await call((done) => consumer.connect({ topic, allTopics: false, timeout: timeoutMs }, done));
  try {
    consumer.assign([{ topic, partition, offset }]);
    consumer.commitSync({ topic, partition, offset });
  } finally {
    await call((done) => consumer.disconnect(done)).catch(() => {});
  }
}

/** The group's committed offset of one partition (undefined when none). */
export function groupOffset(groupId: string, topic: string, partition: number): Promise<number | undefined> {
  return withAdmin(async (admin) => {
    const [result] = await call<RdKafka.GroupResults[]>((done) =>
      admin.listConsumerGroupOffsets([{ groupId, partitions: [{ topic, partition }] }], { timeout: timeoutMs }, done),
    );
    const found = result?.partitions.find((p) => p.topic === topic && p.partition === partition);
    return found === undefined || found.offset < 0 ? undefined : found.offset;
  });
}

/**
 * Produces through kafkajs. Needed for empty (zero-length, non-null) keys and values: the
 * librdkafka-style Producer of @confluentinc/kafka-javascript 1.10.1 writes an empty Buffer as
 * null (seen in a run; kafkajs reads null back too), kafkajs writes it as empty bytes.
 */
export async function sendWithKafkajs(topic: string, records: readonly TestRecord[]): Promise<void> {
  const kafka = new kafkajs.Kafka({
    brokers: testBrokers.split(','),
    clientId: 'amends-test-kafkajs-producer',
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  try {
    await producer.send({
      topic,
      messages: records.map((r) => ({ partition: r.partition, key: r.key, value: r.value })),
    });
  } finally {
    await producer.disconnect();
  }
}
