/**
 * The worker's source consumer as configured (docs/design.md#consumer): its options, their defaults with
 * the unit in each name, the checks they must pass, and the librdkafka configuration built from
 * them. The consumer (kafka-source-consumer.ts) only plays the protocol; every figure it waits
 * or fetches by is here, with the measurement behind it.
 */
import type { RdKafka } from '@confluentinc/kafka-javascript';
import { usageError } from '../../kernel/amends-error.js';
import { assertInvariant } from '../../kernel/invariant.js';
import type { BufferLimits } from './fair-partition-buffer.js';
import { librdkafkaBaseConfig } from './kafka-connection.js';

/** docs/design.md#consumer: the broker's minimum, so a dead member's partitions move within seconds. */
export const defaultSessionTimeoutMs = 6_000;
/** librdkafka's default `heartbeat.interval.ms`: the most a heartbeat waits, whatever the session timeout. */
const heartbeatIntervalMaxMs = 3_000;
/** librdkafka's rebalance timeout: one minute, above the worker's 20 s operation budget. */
export const maxPollIntervalMs = 60_000;
/**
 * How long one `poll` waits for its first record; also the longest `assign` waits for an
 * abandoned poll, whose native read serves the rebalance and then waits on for a record of
 * an assignment not yet applied. At 250 ms that wait was most of the 336 ms from a claim to
 * the first commit (the scale run's restart; 129 ms at 50 ms, docs/benchmarks.md); an idle
 * worker's 20 empty polls a second cost next to nothing.
 */
export const defaultPollWaitMs = 50;
/**
 * The poll wait while nothing is assigned (after connect, after a revocation). Such a poll can
 * only serve a rebalance, and the native read that serves the assignment then waits on for a
 * record of partitions not yet assigned, which `assign` must wait out (see there): with the
 * full wait, a restarted worker's assign waited 16-25 ms for it after its claim was done. At
 * 10 ms the read ends before the claim does (observation + claim + seek: ~20 ms); an idle
 * member without partitions wakes 100 times a second, which costs next to nothing.
 */
export const unassignedPollWaitMs = 10;

/**
 * Bounded prefetch: at most 1 MiB per partition and per fetch, 4 MiB queued. A fetched record
 * batch is decompressed whole and stays in memory while any of its records is queued, so the
 * native memory follows what is fetched ahead, not only the queued records' bytes. Measured on
 * one consumer reading 8 backlogged partitions of lz4 batches (a bulk producer's, up to 4 MB
 * each) at ~23,000 records/s: with 8 MiB per fetch and 16 MiB queued its RSS was 187 MB; with
 * 1 MiB and 4 MiB 87–91 MB, at the same rate. The read-ahead buffers (fair-partition-buffer.ts)
 * hold the next polls' records anyway.
 */
const maxPartitionFetchBytes = 1_048_576;
const fetchMaxBytes = 1_048_576;
const queuedMaxMessagesKbytes = 4_096;
const queuedMinMessages = 10_000;
/**
 * How long librdkafka postpones a partition's next fetch once its queue passed those limits
 * (librdkafka's default is 1 s). A pause and resume of the read-ahead (fair-partition-buffer.ts)
 * does not reset that wait, so a resumed partition sat out the rest of the second. Measured on
 * this consumer alone over two backlogged partitions, polls of 2000 with a 100 ms stand-in for
 * each decision: 8,354 records/s with the default, 16,919 with 10 ms (16,090 before the
 * read-ahead).
 */
const fetchQueueBackoffMs = 10;

/** docs/design.md#consumer: the group id is derived from the namespace alone. */
export function sourceGroupId(namespace: string): string {
  return `amends.${namespace}.source`;
}

export interface KafkaSourceConsumerOptions {
  brokers: string;
  namespace: string;
  /** The manifest's source topic. */
  topic: string;
  /** ERR__ASSIGN_PARTITIONS, partitions ascending: the worker forwards it to runtime.partitionsAssigned. */
  onAssigned: (partitions: readonly number[]) => void;
  /** ERR__REVOKE_PARTITIONS (lost = assignmentLost()): forwarded to runtime.partitionsRevoked. */
  onRevoked: (lost: boolean) => void;
  /** `--instance-id`: static membership (KIP-345), so a restarted process reclaims its partitions. */
  instanceId?: string;
  /** `session.timeout.ms`; default `defaultSessionTimeoutMs` (6000). */
  sessionTimeoutMs?: number;
  /** librdkafka client id; default `amends-worker-<namespace>`. */
  clientId?: string;
  /** How long one poll waits for its first record; default `defaultPollWaitMs` (50 ms). */
  pollWaitMs?: number;
  /** Errors librdkafka reports outside any call (broker connections, a failing callback). */
  onClientError?: (message: string) => void;
  /** The broker's answer to each `commitFrontier` (monitoring offsets): ok, or why not. */
  onGroupOffsetCommit?: (result: { ok: boolean; detail: string | null }) => void;
  /** Read-ahead limits over all assigned partitions; default bufferedRecordsMax / bufferedBytesMax. */
  bufferLimits?: BufferLimits;
}

/** What the librdkafka configuration depends on: the options without callbacks and polling. */
export type SourceConsumerConfigOptions = Omit<
  KafkaSourceConsumerOptions,
  'onAssigned' | 'onRevoked' | 'onClientError' | 'onGroupOffsetCommit' | 'pollWaitMs' | 'bufferLimits'
>;

/** The poll wait of these options, checked: a caller (only tests set it) passes a whole positive number. */
export function pollWaitMsOf(options: Pick<KafkaSourceConsumerOptions, 'pollWaitMs'>): number {
  const pollWaitMs = options.pollWaitMs ?? defaultPollWaitMs;
  assertInvariant(Number.isSafeInteger(pollWaitMs) && pollWaitMs >= 1, `a poll wait of ${pollWaitMs} ms`);
  return pollWaitMs;
}

/**
 * The session timeout of these options, checked: the CLI refuses one below its minimum, so a
 * smaller one is a bug. A larger one than `max.poll.interval.ms` is the user's to fix:
 * librdkafka refuses it only at connect ("`max.poll.interval.ms`must be >= `session.timeout.ms`",
 * code -1, measured with 1.10.1), which would read as a broker that does not answer.
 */
function sessionTimeoutMsOf(options: Pick<KafkaSourceConsumerOptions, 'sessionTimeoutMs'>): number {
  const sessionTimeoutMs = options.sessionTimeoutMs ?? defaultSessionTimeoutMs;
  assertInvariant(
    Number.isSafeInteger(sessionTimeoutMs) && sessionTimeoutMs >= 1,
    `a session timeout of ${sessionTimeoutMs} ms`,
  );
  if (sessionTimeoutMs > maxPollIntervalMs) {
    throw usageError(
      `the session timeout (${sessionTimeoutMs} ms) must not exceed max.poll.interval.ms (${maxPollIntervalMs} ms)`,
    );
  }
  return sessionTimeoutMs;
}

/** A third of the session timeout (the Kafka consumer's advice), at most librdkafka's default, at least 1 ms. */
function heartbeatIntervalMs(sessionTimeoutMs: number): number {
  return Math.max(1, Math.min(heartbeatIntervalMaxMs, Math.floor(sessionTimeoutMs / 3)));
}

/** The librdkafka configuration of docs/design.md#consumer (exported so tests and diagnostics can show it). */
export function sourceConsumerConfig(options: SourceConsumerConfigOptions): {
  global: RdKafka.ConsumerGlobalConfig;
  topic: RdKafka.ConsumerTopicConfig;
} {
  const sessionTimeoutMs = sessionTimeoutMsOf(options);
  return {
    global: {
      ...librdkafkaBaseConfig(options.brokers, options.clientId ?? `amends-worker-${options.namespace}`),
      'group.id': sourceGroupId(options.namespace),
      'group.protocol': 'classic',
      // Eager range assignment: a rebalance revokes the whole assignment, then assigns anew.
      'partition.assignment.strategy': 'range',
      'session.timeout.ms': sessionTimeoutMs,
      'heartbeat.interval.ms': heartbeatIntervalMs(sessionTimeoutMs),
      'max.poll.interval.ms': maxPollIntervalMs,
      ...(options.instanceId === undefined ? {} : { 'group.instance.id': options.instanceId }),
      // PostgreSQL holds the positions: nothing is stored or committed behind our back.
      'enable.auto.commit': false,
      'enable.auto.offset.store': false,
      'isolation.level': 'read_committed',
      'enable.partition.eof': false,
      'allow.auto.create.topics': false,
      'max.partition.fetch.bytes': maxPartitionFetchBytes,
      'fetch.max.bytes': fetchMaxBytes,
      'queued.max.messages.kbytes': queuedMaxMessagesKbytes,
      'queued.min.messages': queuedMinMessages,
      'fetch.queue.backoff.ms': fetchQueueBackoffMs,
    },
    // A missing or out-of-range position is an error (−140), never a silent jump.
    topic: { 'auto.offset.reset': 'error' },
  };
}
