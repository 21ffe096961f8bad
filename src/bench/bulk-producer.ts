/**
 * The benchmark's publisher: one idempotent librdkafka producer (acks=all, as source-load)
 * that batches on its own (linger, big batches, lz4) instead of waiting per record, and keeps,
 * per delivered record, its coordinates and the wall-clock time it was handed to the client.
 * The send times are what publish → view latency is measured from.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RdKafka } from '@confluentinc/kafka-javascript';
import type { TrafficRecord } from '../domain/ledger-traffic.js';
import {
  describeKafkaError,
  kafkaErrorCode,
  kafkaErrorCodes,
  librdkafkaBaseConfig,
  viaCallback,
} from '../io/kafka/kafka-connection.js';
import { kafkaClientCloseTimeoutMs, kafkaConnectTimeoutMs } from '../io/kafka/kafka-timeouts.js';

/** How long a send waits for room in librdkafka's full local queue before trying again. */
const queueFullWaitMs = 20;
/** How often `flush` looks whether every delivery report has come. */
const deliveryPollMs = 20;

export interface BulkProducerOptions {
  brokers: string;
  topic: string;
  /** librdkafka's linger: large for a backlog (fewer, bigger requests), small for latency. */
  lingerMs: number;
  /** librdkafka's local queue (records): a bound on the harness's own memory. Default 1,000,000. */
  queueMaxMessages?: number;
}

export class BulkProducer {
  private nextId = 0;
  private readonly sentAtMs: number[] = [];
  private failures: string[] = [];
  private delivered = 0;
  /** `${partition}:${offset}` → the time the record was handed to produce(). */
  readonly sendTimes = new Map<string, number>();
  /** Per partition: the highest delivered offset + 1 (the end this producer made). */
  readonly ends = new Map<number, number>();

  private constructor(
    private readonly producer: RdKafka.Producer,
    private readonly options: BulkProducerOptions,
  ) {
    producer.on('delivery-report', (error, report) => {
      const id = report.opaque as number;
      if (error) {
        this.failures.push(describeKafkaError(error));
        return;
      }
      this.delivered += 1;
      const sent = this.sentAtMs[id];
      if (sent !== undefined) this.sendTimes.set(`${report.partition}:${report.offset}`, sent);
      this.ends.set(report.partition, Math.max(this.ends.get(report.partition) ?? 0, report.offset + 1));
    });
  }

  static async open(options: BulkProducerOptions): Promise<BulkProducer> {
    const producer = new RdKafka.Producer({
      ...librdkafkaBaseConfig(options.brokers, 'amends-bench-producer'),
      'enable.idempotence': true,
      acks: -1,
      'linger.ms': options.lingerMs,
      'batch.num.messages': 10_000,
      'batch.size': 4_000_000,
      'compression.type': 'lz4',
      'queue.buffering.max.messages': options.queueMaxMessages ?? 1_000_000,
      'queue.buffering.max.kbytes': 1_048_576,
      dr_cb: true,
    });
    await viaCallback((done) => producer.connect({ timeout: kafkaConnectTimeoutMs }, done));
    producer.setPollInterval(20);
    return new BulkProducer(producer, options);
  }

  get deliveredCount(): number {
    return this.delivered;
  }

  /** Hands one record to librdkafka; waits (briefly) only when its local queue is full. */
  async send(record: TrafficRecord, keepSendTime: boolean): Promise<void> {
    const id = this.nextId++;
    for (;;) {
      try {
        if (keepSendTime) this.sentAtMs[id] = Date.now();
        this.producer.produce(this.options.topic, record.partition, record.value, record.key, null, id);
        return;
      } catch (error) {
        if (kafkaErrorCode(error) !== kafkaErrorCodes.queueFull) throw error;
        await sleep(queueFullWaitMs);
      }
    }
  }

  /** Waits until every record handed over so far has a delivery report; fails on any failed one. */
  async flush(timeoutMs: number): Promise<void> {
    await viaCallback((done) => this.producer.flush(timeoutMs, done));
    const deadline = Date.now() + timeoutMs;
    while (this.delivered + this.failures.length < this.nextId && Date.now() < deadline) {
      await sleep(deliveryPollMs);
    }
    if (this.failures.length > 0) throw new Error(`${this.failures.length} records failed: ${this.failures[0]}`);
    if (this.delivered < this.nextId) throw new Error(`${this.nextId - this.delivered} records were not acknowledged`);
  }

  async close(): Promise<void> {
    await viaCallback((done) => this.producer.disconnect(kafkaClientCloseTimeoutMs, done)).catch(() => {});
    this.producer.setPollInterval(0);
  }
}
