/**
 * The source observer on the real broker (docs/design.md#source-validation): one `observe` reads the topic's
 * metadata (UUID, partition count), its effective retention configuration, and each requested
 * partition's retained start (log start offset) and read-committed end (last stable offset),
 * then says whether the source may still be read, or what changed.
 *
 * Two long-lived clients serve it, opened once and kept across calls because the worker
 * observes after every non-empty poll: librdkafka's AdminClient (metadata, ListOffsets) and a
 * kafkajs admin (DescribeConfigs, which librdkafka's client lacks: docs/design.md#library-facts, topic-config.ts).
 * The four requests run concurrently; an observation costs one round trip to the broker.
 *
 * These are separate reads, not an atomic lock against administrative changes: a topic
 * recreated between two observations is caught by the next one (docs/design.md#source-validation).
 */

import { untilAborted } from '../../kernel/abortable.js';
import { operationalError } from '../../kernel/amends-error.js';
import type { PartitionBounds, SourceInvalidReason, SourceObservation, SourceObserver } from '../../machines/ports.js';
import { KafkaAdmin, type TopicDescription } from './kafka-admin.js';
import { deletedHistory, unsafeRetention } from './source-rules.js';
import { retentionConfigNames, TopicConfigReader } from './topic-config.js';

/** Each broker request of an observation; the worker's whole operation budget is 20 s. */
export const observeRequestTimeoutMs = 5_000;
const defaultClientId = 'amends-source-observer';

export interface KafkaSourceObserverOptions {
  brokers: string;
  /** The manifest's source topic. */
  topic: string;
  /** The manifest's `source_incarnation` (`kafka:` + the topic UUID in hex). */
  incarnation: string;
  /** The configuration's partition count. */
  partitions: number;
  /** librdkafka / kafkajs client id; defaults to `amends-source-observer`. */
  clientId?: string;
}

export class KafkaSourceObserver implements SourceObserver {
  private closed = false;

  private constructor(
    private readonly options: KafkaSourceObserverOptions,
    private admin: KafkaAdmin,
    private readonly configReader: TopicConfigReader,
  ) {}

  /** Opens both admin clients (kafkajs connects here; librdkafka's connects lazily). */
  static async open(options: KafkaSourceObserverOptions): Promise<KafkaSourceObserver> {
    const clientId = options.clientId ?? defaultClientId;
    const configReader = await TopicConfigReader.connect(options.brokers, clientId);
    let admin: KafkaAdmin;
    try {
      admin = KafkaAdmin.open(options.brokers, clientId);
    } catch (error) {
      await configReader.close();
      throw error;
    }
    return new KafkaSourceObserver(options, admin, configReader);
  }

  async observe(partitions: readonly number[], signal: AbortSignal): Promise<SourceObservation> {
    signal.throwIfAborted();
    const { topic } = this.options;
    if (this.closed) throw operationalError(`cannot observe topic ${topic}: the observer is closed`);
    const requested = [...new Set(partitions)].sort((a, b) => a - b);
    for (const p of requested) {
      if (!Number.isSafeInteger(p) || p < 0 || p >= this.options.partitions) {
        throw operationalError(
          `cannot observe ${topic}[${p}]: the configuration has partitions 0..${this.options.partitions - 1}`,
        );
      }
    }
    // All four requests at once. The verdict reads them in the order of docs/design.md#source-validation, so a
    // recreated topic is reported as such even when its offsets could not be listed.
    const settled = Promise.allSettled([
      this.admin.describeTopic(topic, observeRequestTimeoutMs),
      this.configReader.describe(topic, retentionConfigNames),
      this.admin.listOffsets(topic, requested, 'log-start', observeRequestTimeoutMs),
      this.admin.listOffsets(topic, requested, 'read-committed-end', observeRequestTimeoutMs),
    ]);
    const [metadata, config, starts, ends] = await untilAborted(settled, signal, `observing topic ${topic}`);
    this.renewAdminAfterTimeout([metadata, starts, ends]);

    const metadataVerdict = this.judgeMetadata(settledValue(metadata));
    if (metadataVerdict) return metadataVerdict;
    // The first broken rule is the verdict (source-rules.ts lists them in the order to report).
    const [unsafe] = unsafeRetention(topic, settledValue(config));
    if (unsafe) return invalid(unsafe.reason, unsafe.detail);
    const startOffsets = settledValue(starts);
    const endOffsets = settledValue(ends);

    const bounds: PartitionBounds[] = [];
    for (const partition of requested) {
      const retainedStart = startOffsets.get(partition);
      const readCommittedEnd = endOffsets.get(partition);
      if (retainedStart === undefined || readCommittedEnd === undefined) {
        throw operationalError(`the broker did not report the bounds of ${topic}[${partition}]`);
      }
      const gone = deletedHistory(topic, partition, retainedStart);
      if (gone) return invalid(gone.reason, gone.detail);
      bounds.push({ partition, retainedStart, readCommittedEnd });
    }
    return { valid: true, bounds };
  }

  /**
   * A librdkafka request that timed out gets a fresh admin client for the next observation.
   * Seen in a chaos run: after a broker was SIGKILLed and restarted, one worker's describe
   * timed out for 30 s (its outage budget) while the other worker, with its own clients,
   * observed the same topic on the two live brokers. A new client bootstraps again from every
   * listed broker instead of waiting on the connection it had.
   */
  private renewAdminAfterTimeout(results: readonly PromiseSettledResult<unknown>[]): void {
    const timedOut = results.some((r) => r.status === 'rejected' && /Local: Timed out/.test(String(r.reason)));
    if (!timedOut || this.closed) return;
    const stale = this.admin;
    this.admin = KafkaAdmin.open(this.options.brokers, this.options.clientId ?? defaultClientId);
    stale.close();
  }

  /** Closes both clients; later observations reject. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.admin.close();
    await this.configReader.close();
  }

  private judgeMetadata(description: TopicDescription | undefined): SourceObservation | undefined {
    const { topic, incarnation, partitions } = this.options;
    if (description === undefined) {
      return invalid(
        'incarnation_changed',
        `topic ${topic} does not exist but the manifest says ${incarnation}: the topic was deleted`,
      );
    }
    if (description.incarnation !== incarnation) {
      return invalid(
        'incarnation_changed',
        `topic ${topic} has UUID ${description.incarnation} but the manifest says ${incarnation}: the topic was recreated`,
      );
    }
    if (description.partitions !== partitions) {
      return invalid(
        'partition_count_changed',
        `topic ${topic} has ${description.partitions} partitions but the configuration says ${partitions}: partitions were added`,
      );
    }
    return undefined;
  }
}

function invalid(reason: SourceInvalidReason, detail: string): SourceObservation {
  return { valid: false, reason, detail };
}

function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'fulfilled') return result.value;
  throw result.reason;
}
