/**
 * The broker's admin API through librdkafka's AdminClient (@confluentinc/kafka-javascript):
 * create and describe topics. Every call carries an explicit timeout and the
 * client is always disconnected (use `withKafkaAdmin`).
 *
 * The effective topic configuration is not here: librdkafka's client lacks DescribeConfigs
 * (docs/design.md#library-facts, upstream issue #444); see topic-config.ts.
 */
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
import { incarnationFromTopicId, isZeroTopicId, type KafkaTopicId } from './topic-incarnation.js';

/** How long one admin request may take before it counts as failed (or, for creation, unknown). */
export const adminRequestTimeoutMs = 10_000;

/**
 * The timeout of a client's first request, before any was answered (see `answered`): long
 * enough for a TLS and SASL handshake with a cluster that works, short enough that a refused
 * one is reported within seconds.
 */
const firstContactTimeoutMs = 2_000;

export interface NewTopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
  /** Topic configuration; librdkafka wants every value as a string (docs/design.md#library-facts). */
  config: Record<string, string>;
}

export interface TopicDescription {
  topic: string;
  /** `kafka:` + the topic UUID in lowercase hex. */
  incarnation: string;
  partitions: number;
}

/** Which end of a partition `listOffsets` reads. */
export type OffsetBoundary = 'log-start' | 'read-committed-end';

/**
 * What a creation request told us. Only `created` and `already-exists` are answers about the
 * topic; `failed` and `unknown` prove nothing: the topic may exist anyway (docs/design.md#manifest).
 */
export type TopicCreation =
  | { outcome: 'created' }
  | { outcome: 'already-exists'; detail: string }
  | { outcome: 'failed'; detail: string }
  | { outcome: 'unknown'; detail: string };

export class KafkaAdmin {
  private closed = false;
  /** Whether a request was answered: then the cluster is reachable, and requests get their full time. */
  private contacted = false;

  private constructor(
    private readonly client: RdKafka.IAdminClient,
    readonly brokers: string,
    /** Why no broker answers, from the client's log (broker-reach.ts); requests run within it. */
    private readonly reach: BrokerReach,
  ) {}

  /**
   * AdminClient.create connects lazily: an unreachable broker shows up as a timed-out request,
   * and a refused, unresolvable or mismatched one only in the client's log and error events.
   */
  static open(brokers: string, clientId: string): KafkaAdmin {
    const reach = new BrokerReach(brokers);
    try {
      return new KafkaAdmin(
        RdKafka.AdminClient.create(librdkafkaBaseConfig(brokers, clientId), reach.handlers),
        brokers,
        reach,
      );
    } catch (error) {
      throw kafkaError(`cannot create a Kafka admin client for ${brokers}: ${describeKafkaError(error)}`, error);
    }
  }

  /** The topic's UUID and partition count, or undefined when the broker does not know the topic. */
  async describeTopic(topic: string, timeoutMs = adminRequestTimeoutMs): Promise<TopicDescription | undefined> {
    let descriptions: RdKafka.TopicDescription[];
    try {
      descriptions = await this.answered(
        (timeout) =>
          viaCallback<RdKafka.TopicDescription[]>((done) => this.client.describeTopics([topic], { timeout }, done)),
        timeoutMs,
      );
    } catch (error) {
      throw kafkaError(`cannot describe topic ${topic} on brokers ${this.brokers}: ${this.cause(error)}`, error);
    }
    const description = descriptions.find((d) => d.name === topic);
    assertInvariant(description !== undefined, `describeTopics answered without topic ${topic}`);
    // An unknown topic is a per-topic error in the answer, not a failed call (seen on Kafka 4.1).
    if (kafkaErrorCode(description.error) === kafkaErrorCodes.unknownTopicOrPartition) return undefined;
    if (description.error) {
      throw kafkaError(`cannot describe topic ${topic}: ${describeKafkaError(description.error)}`);
    }
    // Runtime shape differs from the typings (docs/design.md#library-facts): signed bigint halves + `base64`.
    const topicId = description.topicId as unknown as KafkaTopicId;
    if (isZeroTopicId(topicId)) {
      throw operationalError(
        `the broker reported no topic UUID for ${topic}: amends needs a broker with topic ids (Kafka 2.8+ metadata)`,
      );
    }
    return { topic, incarnation: incarnationFromTopicId(topicId), partitions: description.partitions.length };
  }

  async createTopic(spec: NewTopicSpec): Promise<TopicCreation> {
    try {
      await viaCallback<void>((done) =>
        this.client.createTopic(
          {
            topic: spec.topic,
            num_partitions: spec.partitions,
            replication_factor: spec.replicationFactor,
            config: spec.config,
          },
          adminRequestTimeoutMs,
          done,
        ),
      );
      return { outcome: 'created' };
    } catch (error) {
      const code = kafkaErrorCode(error);
      const detail = describeKafkaError(error);
      if (code === kafkaErrorCodes.topicAlreadyExists) return { outcome: 'already-exists', detail };
      // A local timeout means the request may or may not have reached the controller.
      if (code === kafkaErrorCodes.timedOut || code === undefined || code < 0) return { outcome: 'unknown', detail };
      return { outcome: 'failed', detail };
    }
  }

  /**
   * Deletes the topic (namespace-drop --topics); `missing` when the broker does not know it.
   * The broker deletes asynchronously: the name may take a moment to become free again.
   */
  async deleteTopic(topic: string): Promise<'deleted' | 'missing'> {
    try {
      await viaCallback<void>((done) => this.client.deleteTopic(topic, adminRequestTimeoutMs, done));
      return 'deleted';
    } catch (error) {
      if (kafkaErrorCode(error) === kafkaErrorCodes.unknownTopicOrPartition) return 'missing';
      throw kafkaError(`cannot delete topic ${topic} on brokers ${this.brokers}: ${this.cause(error)}`, error);
    }
  }

  /**
   * One offset per requested partition, in one ListOffsets call: the log start offset
   * (`log-start`, the retained start) or the last stable offset (`read-committed-end`: LATEST
   * under READ_COMMITTED; an open transaction holds it at its first offset). A partition may
   * appear only once per call (docs/design.md#library-facts), hence one call per boundary.
   */
  async listOffsets(
    topic: string,
    partitions: readonly number[],
    boundary: OffsetBoundary,
    timeoutMs = adminRequestTimeoutMs,
  ): Promise<Map<number, number>> {
    assertInvariant(new Set(partitions).size === partitions.length, `listOffsets: duplicate partitions`);
    if (partitions.length === 0) return new Map();
    const spec = boundary === 'log-start' ? RdKafka.OffsetSpec.EARLIEST : RdKafka.OffsetSpec.LATEST;
    let results: RdKafka.ListOffsetsResult[];
    try {
      results = await this.answered(
        (timeout) =>
          viaCallback<RdKafka.ListOffsetsResult[]>((done) =>
            this.client.listOffsets(
              partitions.map((partition) => ({ topic, partition, offset: spec })),
              { timeout, isolationLevel: RdKafka.IsolationLevel.READ_COMMITTED },
              done,
            ),
          ),
        timeoutMs,
      );
    } catch (error) {
      throw kafkaError(
        `cannot list the ${boundary} offsets of topic ${topic} on brokers ${this.brokers}: ${this.cause(error)}`,
        error,
      );
    }
    const offsets = new Map<number, number>();
    for (const result of results) {
      if (result.topic !== topic || !partitions.includes(result.partition)) continue;
      offsets.set(result.partition, listedOffset(result, boundary));
    }
    for (const partition of partitions) {
      assertInvariant(offsets.has(partition), `listOffsets answered without ${topic}[${partition}]`);
    }
    return offsets;
  }

  /**
   * Sends a read-only request (`send(timeoutMs)`). Until one was answered, it is first sent with
   * a short timeout: librdkafka tells a refused address only in its log, and an admin client
   * cannot be closed while a request waits (its disconnect blocks until that request's timeout),
   * so a refused cluster would cost the full timeout. When no bootstrap address will answer
   * (broker-reach.ts: refused, unresolvable, another protocol), that first failure is the
   * answer; otherwise the request is sent again with its full
   * timeout, so a slow cluster that works pays the short wait once.
   */
  private async answered<T>(send: (timeoutMs: number) => Promise<T>, timeoutMs: number): Promise<T> {
    if (!this.contacted && timeoutMs > firstContactTimeoutMs) {
      try {
        const first = await this.reach.within(send(firstContactTimeoutMs));
        this.contacted = true;
        return first;
      } catch (error) {
        if (this.reach.noneWillAnswer()) throw error;
      }
    }
    const answer = await this.reach.within(send(timeoutMs));
    this.contacted = true;
    return answer;
  }

  /** A failed request's cause: what the connections showed, or what to check when it timed out. */
  private cause(error: unknown): string {
    return this.reach.cause(error);
  }

  /** Synchronous in the library: it frees the handle; there is no completion callback. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.disconnect();
  }
}

/** Runs `use` with an admin client that is always closed afterwards. */
export async function withKafkaAdmin<T>(
  brokers: string,
  clientId: string,
  use: (admin: KafkaAdmin) => Promise<T>,
): Promise<T> {
  const admin = KafkaAdmin.open(brokers, clientId);
  try {
    return await use(admin);
  } finally {
    admin.close();
  }
}

/**
 * librdkafka's offset sentinels: it answers a partition it could not ask (no leader, e.g. a
 * broker of a replicated topic down) with RD_KAFKA_OFFSET_INVALID (-1001) and no error.
 */
const offsetInvalid = -1001;

/**
 * The offset one ListOffsets result gives. A broker that could not answer (an error, or a
 * negative sentinel such as -1001 for a leaderless partition) is an outage, reported as one
 * line; only a number no broker can send (fractional, beyond 2^53) is a bug.
 */
export function listedOffset(result: RdKafka.ListOffsetsResult, boundary: OffsetBoundary): number {
  const where = `${result.topic}[${result.partition}]`;
  if (result.error) {
    throw kafkaError(`cannot list the ${boundary} offset of ${where}: ${describeKafkaError(result.error)}`);
  }
  // int64 arrives as a JS number: only a safe integer is an offset at all.
  assertInvariant(Number.isSafeInteger(result.offset), `the ${boundary} offset of ${where} is ${result.offset}`);
  if (result.offset < 0) {
    const why = result.offset === offsetInvalid ? 'no leader answered for it' : 'no offset was returned';
    throw kafkaError(
      `cannot list the ${boundary} offset of ${where}: the broker answered ${result.offset} (${why}); is a broker down or the partition without a leader?`,
    );
  }
  return result.offset;
}
