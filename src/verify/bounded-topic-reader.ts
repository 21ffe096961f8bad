/**
 * Reads every record of a topic in [0, end) per partition, with read_committed, for the
 * verifier (docs/design.md#bounded-verifier, steps 4 and 5): the source up to the bound, the output topic up
 * to its end. librdkafka's `KafkaConsumer` with explicit assignments at offset 0 (no group
 * membership, no commits, no automatic offset reset), bytes exactly as received: a null key
 * or value stays null, an empty one stays empty.
 *
 * When is a partition read to its end? Under read_committed the last offsets before `end` may
 * be transaction markers or aborted records, which are never delivered, so "the record at
 * end - 1 arrived" is not enough. librdkafka reports a partition EOF with the offset where
 * its fetch stopped (the last stable offset): a partition is done when that offset reaches
 * `end`, or when a record at or past end - 1 arrives. Records at or past `end` (written after
 * the bound was fixed) are dropped.
 *
 * One consumer serves several reads in turn (the source, partition by partition): each
 * consumer brings its own librdkafka threads, and each thread's malloc arena kept its fetch
 * buffers resident after the consumer closed (about 10 MB per partition of the source).
 */
import { RdKafka } from '@confluentinc/kafka-javascript';
import { describeKafkaError, librdkafkaBaseConfig, viaCallback } from '../io/kafka/kafka-connection.js';
import { kafkaClientCloseTimeoutMs, kafkaConnectTimeoutMs } from '../io/kafka/kafka-timeouts.js';
import { waitForFirstRecordOnly } from '../io/kafka/rdkafka-consumer-shim.js';
import { bytesOf } from '../io/kafka/record-bytes.js';
import { operationalError } from '../kernel/amends-error.js';
import { assertInvariant } from '../kernel/invariant.js';

export interface TopicRecord {
  partition: number;
  offset: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

export interface TopicReaderOptions {
  brokers: string;
  topic: string;
  clientId: string;
  /** Named in the consumer's `group.id`; nothing is ever committed there. */
  groupId: string;
  /** Fails when no partition moves for this long (default 30 s). */
  stallTimeoutMs?: number;
}

export interface BoundedReadOptions extends TopicReaderOptions {
  /** The end per partition: records in [0, end) are read. */
  ends: ReadonlyMap<number, number>;
  /** Offsets covered so far of the sum of the ends, after every poll. */
  onProgress?: (covered: number, total: number) => void;
}

/**
 * Bounded prefetch, as the worker's consumer (source-consumer-options.ts says why): librdkafka
 * by default queues up to 64 MiB per partition ahead of the reader, and keeps each fetched
 * batch whole while any of its records is queued.
 */
const maxPartitionFetchBytes = 262_144;
const fetchMaxBytes = 1_048_576;
const queuedMaxMessagesKbytes = 1_024;
const queuedMinMessages = 2_000;
/** librdkafka waits 1 s by default before fetching again once the queue passed those limits. */
const fetchQueueBackoffMs = 5;
const pollWaitMs = 200;
const pollRecordsMax = 1_000;
const defaultStallTimeoutMs = 30_000;

/** Yields the records of [0, end) in batches, per partition in offset order. */
export async function* readTopicUpTo(options: BoundedReadOptions): AsyncGenerator<TopicRecord[]> {
  const reader = new BoundedTopicReader(options);
  try {
    yield* reader.read(options.ends, options.onProgress);
  } finally {
    await reader.close();
  }
}

/** The partitions of one `read`: their ends, and the next offset to cover of each unfinished one. */
interface ReadState {
  ends: ReadonlyMap<number, number>;
  pending: Map<number, number>;
}

/** A consumer of one topic, connected at the first read that has records to read, for reads in turn. */
export class BoundedTopicReader {
  private consumer: RdKafka.KafkaConsumer | undefined;
  private current: ReadState | undefined;
  /** Partitions an earlier read finished: records of theirs still queued are dropped. */
  private readonly done = new Set<number>();

  constructor(private readonly options: TopicReaderOptions) {}

  /** Yields the records of [0, end) of `ends`' partitions, in batches, per partition in offset order. */
  async *read(
    ends: ReadonlyMap<number, number>,
    onProgress?: (covered: number, total: number) => void,
  ): AsyncGenerator<TopicRecord[]> {
    const { topic } = this.options;
    if (this.current) throw new Error(`verify: a read of ${topic} is still open`);
    const total = [...ends.values()].reduce((a, b) => a + b, 0);
    const state: ReadState = { ends, pending: new Map() };
    for (const [partition, end] of ends) {
      assertInvariant(Number.isSafeInteger(end) && end >= 0, `end ${end} of ${topic}[${partition}]`);
      assertInvariant(!this.done.has(partition), `${topic}[${partition}] read twice`);
      if (end > 0) state.pending.set(partition, 0);
    }
    onProgress?.(covered(state), total);
    if (state.pending.size === 0) return;
    const consumer = await this.connected();
    this.current = state;
    try {
      consumer.assign([...state.pending.keys()].map((partition) => ({ topic, partition, offset: 0 })));
      yield* this.poll(consumer, state, (now) => onProgress?.(now, total));
    } finally {
      this.current = undefined;
      for (const partition of ends.keys()) this.done.add(partition);
      // A consumer that cannot unassign fails the next assign, which says why; here it
      // would hide the error that ended the read.
      try {
        consumer.unassign();
      } catch {}
    }
  }

  async close(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    if (!consumer) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      viaCallback((done) => consumer.disconnect(done)).catch(() => {}),
      new Promise((resolve) => {
        timer = setTimeout(resolve, kafkaClientCloseTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  private async *poll(
    consumer: RdKafka.KafkaConsumer,
    state: ReadState,
    onProgress: (covered: number) => void,
  ): AsyncGenerator<TopicRecord[]> {
    const { topic } = this.options;
    const { ends, pending } = state;
    const stallTimeoutMs = this.options.stallTimeoutMs ?? defaultStallTimeoutMs;
    let lastMove = Date.now();
    while (pending.size > 0) {
      let batch: RdKafka.Message[];
      try {
        batch = await viaCallback<RdKafka.Message[]>((done) => consumer.consume(pollRecordsMax, done));
      } catch (error) {
        throw operationalError(`reading topic ${topic} failed: ${describeKafkaError(error)}`, error);
      }
      const before = covered(state);
      const records = this.recordsOf(batch, state);
      if (records.length > 0) yield records;
      const now = covered(state);
      onProgress(now);
      if (now > before || pending.size === 0) lastMove = Date.now();
      else if (Date.now() - lastMove > stallTimeoutMs) {
        const stuck = [...pending].map(([p, at]) => `${topic}[${p}] at ${at} of end ${ends.get(p)}`).join(', ');
        throw operationalError(`reading topic ${topic} made no progress for ${stallTimeoutMs / 1000} s: ${stuck}`);
      }
    }
  }

  /** The batch's records in [0, end), moving each partition's next offset on. */
  private recordsOf(batch: RdKafka.Message[], { ends, pending }: ReadState): TopicRecord[] {
    const { topic } = this.options;
    const records: TopicRecord[] = [];
    for (const m of batch) {
      if (m.topic === topic && this.done.has(m.partition)) continue; // queued before its read ended
      const end = ends.get(m.partition);
      assertInvariant(m.topic === topic && end !== undefined, `read a record of ${m.topic}[${m.partition}]`);
      assertInvariant(Number.isSafeInteger(m.offset) && m.offset >= 0, `read offset ${m.offset}`);
      if (m.offset >= end) {
        pending.delete(m.partition);
        continue;
      }
      records.push({ partition: m.partition, offset: m.offset, key: bytesOf(m.key), value: bytesOf(m.value) });
      if (m.offset >= end - 1) pending.delete(m.partition);
      else if (pending.has(m.partition)) pending.set(m.partition, m.offset + 1);
    }
    return records;
  }

  private async connected(): Promise<RdKafka.KafkaConsumer> {
    if (this.consumer) return this.consumer;
    const { brokers, topic } = this.options;
    const consumer = newConsumer(this.options);
    consumer.on('partition.eof', (eof: { topic: string; partition: number; offset: number }) => {
      const state = this.current;
      const end = state?.ends.get(eof.partition);
      if (state && eof.topic === topic && end !== undefined && eof.offset >= end) state.pending.delete(eof.partition);
    });
    try {
      await viaCallback((done) => consumer.connect({ topic, allTopics: false, timeout: kafkaConnectTimeoutMs }, done));
    } catch (error) {
      throw operationalError(
        `cannot connect a consumer of topic ${topic} to ${brokers}: ${describeKafkaError(error)}`,
        error,
      );
    }
    this.consumer = consumer;
    return consumer;
  }
}

/** Offsets covered so far of the read's ends. */
function covered({ ends, pending }: ReadState): number {
  return [...ends].reduce(
    (sum, [partition, end]) => sum + (pending.has(partition) ? (pending.get(partition) ?? 0) : end),
    0,
  );
}

function newConsumer(options: TopicReaderOptions): RdKafka.KafkaConsumer {
  const consumer = new RdKafka.KafkaConsumer(
    {
      ...librdkafkaBaseConfig(options.brokers, options.clientId),
      'group.id': options.groupId,
      'enable.auto.commit': false,
      'enable.auto.offset.store': false,
      'isolation.level': 'read_committed',
      'enable.partition.eof': true,
      'allow.auto.create.topics': false,
      'fetch.wait.max.ms': 100,
      'max.partition.fetch.bytes': maxPartitionFetchBytes,
      'fetch.max.bytes': fetchMaxBytes,
      'queued.max.messages.kbytes': queuedMaxMessagesKbytes,
      'queued.min.messages': queuedMinMessages,
      'fetch.queue.backoff.ms': fetchQueueBackoffMs,
    },
    // An offset outside the retained range is an error (−140), never a silent jump.
    { 'auto.offset.reset': 'error' },
  );
  consumer.setDefaultConsumeTimeout(pollWaitMs);
  waitForFirstRecordOnly(consumer);
  return consumer;
}
