/**
 * The view's reader of the output topic (docs/design.md#view) on librdkafka's
 * `KafkaConsumer`: read_committed, no automatic offset reset, no commits, and explicit
 * positions from the view's own frontier in PostgreSQL (PostgreSQL wins, as for the worker).
 *
 * It assigns every partition itself instead of joining a group rebalance: exactly one view
 * per namespace is active (role-lock.ts), so there is nothing to share, and an explicit
 * `assign` with offsets needs no rebalance callback (docs/design.md#kafka-consumer: assign with offsets,
 * not `seek`). The group id `amends.<namespace>.view` names the client; no offset is ever
 * committed to it.
 */
import { RdKafka } from '@confluentinc/kafka-javascript';
import { operationalError } from '../../kernel/amends-error.js';
import { assertInvariant } from '../../kernel/invariant.js';
import { BrokerReach } from './broker-reach.js';
import { describeKafkaError, kafkaErrorCode, librdkafkaBaseConfig, viaCallback } from './kafka-connection.js';
import { kafkaError } from './kafka-errors.js';
import { kafkaClientCloseTimeoutMs, kafkaConnectTimeoutMs } from './kafka-timeouts.js';
import { waitForFirstRecordOnly } from './rdkafka-consumer-shim.js';

/** How long one poll waits for its first record (then it takes what is already fetched). */
const pollWaitMs = 250;
const errAutoOffsetReset = RdKafka.CODES.ERRORS.ERR__AUTO_OFFSET_RESET; // -140

export function viewGroupId(namespace: string): string {
  return `amends.${namespace}.view`;
}

export interface OutputRecord {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
}

export class OutputConsumer {
  private closed = false;

  private constructor(
    private readonly consumer: RdKafka.KafkaConsumer,
    readonly topic: string,
  ) {}

  static async open(
    brokers: string,
    namespace: string,
    topic: string,
    clientId: string,
    onClientError: (detail: string) => void,
  ): Promise<OutputConsumer> {
    const consumer = new RdKafka.KafkaConsumer(
      {
        ...librdkafkaBaseConfig(brokers, clientId),
        'group.id': viewGroupId(namespace),
        'enable.auto.commit': false,
        'enable.auto.offset.store': false,
        'isolation.level': 'read_committed',
        'enable.partition.eof': false,
        'allow.auto.create.topics': false,
        // The broker answers a fetch as soon as one record is there; this bounds the idle wait.
        'fetch.wait.max.ms': 100,
      },
      // A missing or out-of-range position is an error (−140), never a silent jump.
      { 'auto.offset.reset': 'error' },
    );
    const reach = new BrokerReach(brokers);
    reach.watch(consumer);
    consumer.on('event.error', (error) => onClientError(`kafka consumer: ${describeKafkaError(error)}`));
    consumer.setDefaultConsumeTimeout(pollWaitMs);
    waitForFirstRecordOnly(consumer);
    try {
      await reach.within(
        viaCallback((done) => consumer.connect({ topic, allTopics: false, timeout: kafkaConnectTimeoutMs }, done)),
      );
    } catch (error) {
      throw kafkaError(`cannot connect the view's consumer to ${brokers}: ${reach.cause(error)}`, error);
    }
    return new OutputConsumer(consumer, topic);
  }

  /** Reads every partition from the given positions (the view frontier). */
  assign(positions: ReadonlyMap<number, number>): void {
    for (const [partition, offset] of positions) {
      assertInvariant(Number.isSafeInteger(offset) && offset >= 0, `assign ${this.topic}[${partition}] at ${offset}`);
    }
    try {
      this.consumer.assign([...positions].map(([partition, offset]) => ({ topic: this.topic, partition, offset })));
    } catch (error) {
      throw kafkaError(`cannot assign the output topic's partitions: ${describeKafkaError(error)}`, error);
    }
  }

  async poll(maxRecords: number): Promise<OutputRecord[]> {
    let batch: RdKafka.Message[];
    try {
      batch = await viaCallback<RdKafka.Message[]>((done) => this.consumer.consume(maxRecords, done));
    } catch (error) {
      if (kafkaErrorCode(error) === errAutoOffsetReset) {
        throw operationalError(
          `a view position lies outside the output topic's retained range: ${describeKafkaError(error)}`,
          error,
        );
      }
      throw kafkaError(`polling output topic ${this.topic} failed: ${describeKafkaError(error)}`, error);
    }
    return batch.map((m) => {
      assertInvariant(m.topic === this.topic, `polled a record of ${m.topic}`);
      assertInvariant(Number.isSafeInteger(m.offset) && m.offset >= 0, `polled offset ${m.offset}`);
      return {
        partition: m.partition,
        offset: m.offset,
        key: typeof m.key === 'string' ? Buffer.from(m.key) : (m.key ?? null),
        value: m.value ?? null,
      };
    });
  }

  /**
   * The partition's end as of this consumer's latest fetch, sending nothing (librdkafka's
   * cached high watermark, rdkafka_fetcher.c: `rktp_hi_offset`); undefined before a fetch of it
   * answered. The relay writes the output topic without transactions, so the high watermark
   * is also its read-committed end.
   */
  cachedEnd(partition: number): number | undefined {
    try {
      const { highOffset } = this.consumer.getWatermarkOffsets(this.topic, partition);
      return Number.isSafeInteger(highOffset) && highOffset >= 0 ? highOffset : undefined;
    } catch {
      return undefined; // nothing cached yet (or disconnected): no lag to show
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      viaCallback((done) => this.consumer.disconnect(done)).catch(() => {}),
      new Promise((resolve) => {
        timer = setTimeout(resolve, kafkaClientCloseTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }
}
