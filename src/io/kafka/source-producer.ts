/**
 * Publishes source records (source-load) through an idempotent librdkafka producer:
 * explicit partition per record, acks from all in-sync replicas, a delivery deadline, and a
 * delivery report per record that resolves its (partition, offset) or says why not.
 *
 * Facts relied on (docs/design.md#kafka-client):
 * - delivery reports need `dr_cb: true` and someone calling poll(): setPollInterval(n) (here every 5 ms);
 * - `delivery.timeout.ms` is librdkafka's alias of `message.timeout.ms`: a record without an
 *   acknowledgement by then gets a report with ERR__MSG_TIMED_OUT;
 * - flush()/disconnect() default to 500 ms: close() passes real timeouts;
 * - the report carries the `opaque` given to produce(): it identifies the record.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RdKafka } from '@confluentinc/kafka-javascript';
import { operationalError } from '../../kernel/amends-error.js';
import { assertInvariant } from '../../kernel/invariant.js';
import { BrokerReach } from './broker-reach.js';
import {
  describeKafkaError,
  kafkaErrorCode,
  kafkaErrorCodes,
  librdkafkaBaseConfig,
  viaCallback,
} from './kafka-connection.js';
import { kafkaError } from './kafka-errors.js';
import { kafkaConnectTimeoutMs } from './kafka-timeouts.js';
import { producerMessageMaxBytes } from './record-size-limit.js';

export interface Delivery {
  partition: number;
  offset: number;
}

/**
 * `failed`: the broker or client rejected the record. `unknown`: no acknowledgement, which
 * does not prove it was not written (a timed-out record may still be on the broker).
 */
export class PublicationError extends Error {
  constructor(
    readonly kind: 'failed' | 'unknown',
    message: string,
  ) {
    super(message);
    this.name = 'PublicationError';
  }
}

export interface SourceProducerOptions {
  brokers: string;
  clientId: string;
  deliveryTimeoutMs: number;
  /**
   * librdkafka's `batch.size`: source-load sets the topic's max.message.bytes here, so a
   * batch of several records is never larger than the topic accepts (record-size-limit.ts).
   */
  batchSizeBytes?: number;
}

/**
 * How often delivery reports are collected. The relay waits for a batch's reports before it
 * marks the batch and takes the next one, so this interval is a floor under publish → view
 * latency: 100 ms made it the largest share (docs/choices.md); a 5 ms poll costs little CPU.
 */
const pollIntervalMs = 5;
/** A report is due by delivery.timeout.ms; past this margin we stop waiting and call it unknown. */
const reportGraceMs = 5_000;
/** When librdkafka's local queue is full, wait this long for deliveries to drain it, then retry. */
const queueFullBackoffMs = 50;

/** A record librdkafka has taken; `delivered` settles with its coordinates or a PublicationError. */
export interface QueuedRecord {
  delivered: Promise<Delivery>;
}

interface Pending {
  resolve: (d: Delivery) => void;
  reject: (e: PublicationError) => void;
  timer: NodeJS.Timeout;
  partition: number;
}

export class SourceProducer {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closing = false;

  private constructor(
    private readonly producer: RdKafka.Producer,
    private readonly options: SourceProducerOptions,
  ) {
    producer.on('delivery-report', (error, report) => this.onReport(error, report));
  }

  static async open(options: SourceProducerOptions): Promise<SourceProducer> {
    assertInvariant(
      Number.isSafeInteger(options.deliveryTimeoutMs) && options.deliveryTimeoutMs > 0,
      `delivery timeout ${options.deliveryTimeoutMs} ms is not a positive integer`,
    );
    const producer = new RdKafka.Producer({
      ...librdkafkaBaseConfig(options.brokers, options.clientId),
      // Idempotence: librdkafka's internal retries cannot duplicate or reorder a record.
      'enable.idempotence': true,
      acks: -1, // all in-sync replicas (idempotence requires it)
      'delivery.timeout.ms': options.deliveryTimeoutMs,
      'message.max.bytes': producerMessageMaxBytes,
      ...(options.batchSizeBytes === undefined ? {} : { 'batch.size': options.batchSizeBytes }),
      dr_cb: true,
    });
    const reach = new BrokerReach(options.brokers);
    reach.watch(producer);
    try {
      await reach.within(viaCallback((done) => producer.connect({ timeout: kafkaConnectTimeoutMs }, done)));
    } catch (error) {
      throw kafkaError(`cannot connect a producer to brokers ${options.brokers}: ${reach.cause(error)}`, error);
    }
    producer.setPollInterval(pollIntervalMs);
    return new SourceProducer(producer, options);
  }

  /**
   * Hands one record for `partition` to librdkafka and resolves once it is queued, with the
   * promise of its delivery. Await each call before the next: records queued in order for
   * one partition are written in that order (idempotent producer: sequence numbers, at most
   * 5 requests in flight), and awaiting keeps a queue-full retry from reordering them.
   */
  async enqueue(topic: string, partition: number, key: Uint8Array, value: Uint8Array): Promise<QueuedRecord> {
    assertInvariant(!this.closing, 'enqueue after close');
    const id = this.nextId++;
    const keyBuffer = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
    const valueBuffer = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    const deadline = Date.now() + this.options.deliveryTimeoutMs;
    for (;;) {
      try {
        this.producer.produce(topic, partition, valueBuffer, keyBuffer, null, id);
        break;
      } catch (error) {
        if (kafkaErrorCode(error) === kafkaErrorCodes.queueFull && Date.now() < deadline) {
          await sleep(queueFullBackoffMs);
          continue;
        }
        // produce() threw: librdkafka did not take the record, so it was not sent.
        throw new PublicationError('failed', `not queued for sending: ${describeKafkaError(error)}`);
      }
    }
    const reportDueMs = this.options.deliveryTimeoutMs + reportGraceMs;
    const delivered = new Promise<Delivery>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new PublicationError('unknown', `no delivery report within ${reportDueMs} ms`));
      }, reportDueMs);
      this.pending.set(id, { resolve, reject, timer, partition });
    });
    return { delivered };
  }

  private onReport(error: unknown, report: RdKafka.DeliveryReport): void {
    const id = report.opaque;
    if (typeof id !== 'number') return;
    const waiting = this.pending.get(id);
    if (!waiting) return; // already given up on (unknown): a late report changes nothing said
    this.pending.delete(id);
    clearTimeout(waiting.timer);
    if (error) {
      const timedOut = kafkaErrorCode(error) === kafkaErrorCodes.messageTimedOut;
      waiting.reject(
        new PublicationError(
          timedOut ? 'unknown' : 'failed',
          `${timedOut ? 'not acknowledged within the delivery timeout' : 'rejected'}: ${describeKafkaError(error)}`,
        ),
      );
      return;
    }
    // Checked here, reported through the record's promise: a throw inside this event
    // listener would escape as an uncaught exception.
    if (report.partition !== waiting.partition || !Number.isSafeInteger(report.offset) || report.offset < 0) {
      waiting.reject(
        new PublicationError(
          'unknown',
          `invariant violated: delivery report for partition ${report.partition} offset ${report.offset}, asked for partition ${waiting.partition}`,
        ),
      );
      return;
    }
    waiting.resolve({ partition: report.partition, offset: report.offset });
  }

  /**
   * Flushes (waiting at most `timeoutMs` for outstanding reports) and disconnects. Any record
   * still unreported afterwards is rejected as unknown. Resolves once the client has fully
   * disconnected, or after `timeoutMs` more if the library never calls back.
   */
  async close(timeoutMs: number): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    // Stop the poll timer *before* disconnecting. The disconnect deletes the native client on
    // a worker thread under a write lock, while poll() on the main thread checks only
    // IsConnected() and then uses the client without that lock (src/producer.cc NodePoll,
    // Producer::Disconnect, 1.10.1): a poll landing during the teardown is a use after free
    // that kills the process with a signal (seen: source-load exiting by signal, more often
    // with a short poll interval). Flushing still delivers the reports: rd_kafka_flush serves
    // the delivery callbacks itself, and they reach JavaScript through the binding's dispatcher.
    this.producer.setPollInterval(0);
    try {
      // disconnect(timeout) flushes with that timeout first, then tears the client down.
      await withDeadline(
        viaCallback((done) => this.producer.disconnect(timeoutMs, done)),
        2 * timeoutMs,
        'the producer did not disconnect in time',
      );
    } finally {
      for (const [id, waiting] of this.pending) {
        clearTimeout(waiting.timer);
        this.pending.delete(id);
        waiting.reject(new PublicationError('unknown', 'the producer closed before a delivery report arrived'));
      }
    }
  }
}

function withDeadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(operationalError(`${message} (${ms} ms)`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
