/**
 * The worker's source consumer (docs/design.md#consumer) on librdkafka's `KafkaConsumer` from
 * @confluentinc/kafka-javascript: one group member per process, classic eager `range`
 * assignment, read_committed, no automatic offset reset, no automatic commits. Positions come
 * only from PostgreSQL: the group actor hands them to `assign` as explicit offsets.
 *
 * The rebalance protocol, as this adapter plays it (docs/design.md#library-facts for each fact):
 * - librdkafka serves rebalances inside `consume()` and calls `rebalance_cb`; the binding
 *   dispatches it to the JS thread and returns, and librdkafka then *waits* until the
 *   application calls `assign()` / `unassign()` (whole group included, in eager mode).
 * - The callback only reports: ERR__ASSIGN_PARTITIONS → `onAssigned(partitions)`,
 *   ERR__REVOKE_PARTITIONS → `onRevoked(assignmentLost())`. The group actor answers later
 *   through `assign(positions)` / `unassign()`; the broker sees that wait (bounded by
 *   `max.poll.interval.ms`, librdkafka's rebalance timeout).
 * - `disconnect()` fires the revoke outside `consume()` and waits for `unassign()`: while
 *   closing, the callback answers by itself.
 * - A consumer error (e.g. −140 for an out-of-range position) fails the poll only when it comes
 *   before any record of that `consume(n)`: the binding drops an error that follows records in
 *   the same call (src/workers.cc, KafkaConsumerConsumeNum). The partition then stops fetching;
 *   it never jumps. The group checks positions against the observed bounds before assigning.
 * - Offsets go to the group for monitoring only (`commitFrontier`, asynchronous, never waited
 *   for): PostgreSQL's frontier is the only position, and a group offset is never read.
 * - Polls take the assigned partitions in turns (fair-partition-buffer.ts): the adapter reads
 *   ahead into per-partition buffers and returns one partition's records per poll, round robin;
 *   when several are assigned, one whose buffer is full is paused so that reading on reaches
 *   the others' records.
 *   librdkafka keeps an application pause across unassign / assign (measured), so every pause
 *   is lifted when the assignment changes.
 */
import { RdKafka } from '@confluentinc/kafka-javascript';
import { untilAborted } from '../../kernel/abortable.js';
import { operationalError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { assertInvariant } from '../../kernel/invariant.js';
import type { PartitionPosition, SourceConsumer, SourceRecord } from '../../machines/ports.js';
import { BrokerReach } from './broker-reach.js';
import { FairPartitionBuffer, type QueueReader } from './fair-partition-buffer.js';
import { describeKafkaError, viaCallback } from './kafka-connection.js';
import { kafkaClientCloseTimeoutMs, kafkaConnectTimeoutMs } from './kafka-timeouts.js';
import { polledRecord } from './polled-record.js';
import { waitForFirstRecordOnly } from './rdkafka-consumer-shim.js';
import {
  type KafkaSourceConsumerOptions,
  pollWaitMsOf,
  sourceConsumerConfig,
  unassignedPollWaitMs,
} from './source-consumer-options.js';
import { SourceConsumerPhase } from './source-consumer-phase.js';
import { isFatal, sourcePollFailure } from './source-poll-failure.js';
import { type PendingRebalance, rebalanceRequest } from './source-rebalance.js';

export class KafkaSourceConsumer implements SourceConsumer {
  private readonly consumer: RdKafka.KafkaConsumer;
  private readonly phase = new SourceConsumerPhase();
  private pending: PendingRebalance | null = null;
  /** The native consume of the latest poll, settled or not: a poll abandoned on abort runs on. */
  private nativeConsume: Promise<void> = Promise.resolve();
  private connecting: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | null = null;
  /** Records that abandoned polls fetched and dropped since the last assign / unassign. */
  private droppedRecords = 0;
  /** A rebalance callback that failed: the next call reports it (a throw there would be lost). */
  private callbackFailure: Error | null = null;
  /** Records read ahead, per assigned partition: what polls hand out in turns. */
  private readonly buffer: FairPartitionBuffer;
  private readonly pollWaitMs: number;
  /** Whether the latest answer to the group was an assignment of at least one partition. */
  private assigned = false;
  /** The partitions the group gave this member at its latest assignment, until the revocation:
   * a group riding through an outage assigns them again outside any callback. */
  private groupPartitions: readonly number[] = [];
  /** The group fenced this client as a static member (librdkafka's fatal error): a new one may rejoin. */
  private fenced = false;
  /** Why no broker answers, from the client's log (broker-reach.ts). */
  private readonly reach: BrokerReach;

  constructor(private readonly options: KafkaSourceConsumerOptions) {
    const config = sourceConsumerConfig(options);
    this.buffer = new FairPartitionBuffer(options.bufferLimits);
    this.reach = new BrokerReach(options.brokers);
    this.pollWaitMs = pollWaitMsOf(options);
    const adapter = this;
    this.consumer = new RdKafka.KafkaConsumer(
      {
        ...config.global,
        // A `function`, not an arrow: the library calls it with `this` = the consumer. Its
        // return value is ignored, so it must not throw or return a rejecting promise.
        rebalance_cb: function (this: RdKafka.KafkaConsumer, error: RdKafka.LibrdKafkaError, assignment: unknown) {
          adapter.onRebalance(this, error, assignment);
        },
        // The answers to commitFrontier's asynchronous commits, served inside poll like the rebalance.
        offset_commit_cb: (error: RdKafka.LibrdKafkaError | null) => {
          if (error) adapter.noteFatal(error);
          options.onGroupOffsetCommit?.({ ok: !error, detail: error ? describeKafkaError(error) : null });
        },
      },
      config.topic,
    );
    waitForFirstRecordOnly(this.consumer);
    this.reach.watch(this.consumer);
    this.consumer.on('event.error', (error) => {
      this.noteFatal(error);
      options.onClientError?.(`kafka consumer: ${describeKafkaError(error)}`);
    });
  }

  /** Connects (metadata for the source topic only) and subscribes; the group join happens in `poll`. */
  async connect(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    this.phase.startConnecting();
    const { topic, brokers } = this.options;
    const metadata = { topic, allTopics: false, timeout: kafkaConnectTimeoutMs };
    const connected = this.reach.within(viaCallback<unknown>((done) => this.consumer.connect(metadata, done)));
    this.connecting = connected.catch(() => {});
    try {
      await untilAborted(connected, signal, 'connecting the source consumer');
    } catch (error) {
      if (signal.aborted) throw error; // the connect runs on: close() waits for it, then disconnects
      this.phase.connectFailed(); // the library disconnects a failed connect itself
      throw operationalError(`cannot connect the source consumer to ${brokers}: ${this.reach.cause(error)}`, error);
    }
    if (!this.phase.isConnecting) return; // closed meanwhile
    try {
      this.consumer.subscribe([topic]);
    } catch (error) {
      throw operationalError(`cannot subscribe to topic ${topic}: ${describeKafkaError(error)}`, error);
    }
    this.phase.subscribed();
  }

  /**
   * Commits a durable frontier to the consumer group, asynchronously, for monitoring only
   * (docs/design.md#consumer: kafka-consumer-groups, kafka_exporter and Burrow read group offsets; the
   * worker never reads them back, PostgreSQL's frontier wins on assignment). It never waits:
   * librdkafka queues the commit and the answer arrives through onGroupOffsetCommit. False
   * when it could not even be queued (not connected, or the client refused it at once).
   */
  commitFrontier(partition: number, frontier: number): boolean {
    if (!this.phase.isConnected) return false;
    try {
      this.consumer.commit({ topic: this.options.topic, partition, offset: frontier });
      return true;
    } catch (error) {
      this.noteFatal(error);
      this.options.onGroupOffsetCommit?.({ ok: false, detail: describeKafkaError(error) });
      return false;
    }
  }

  /**
   * Up to `maxRecords` records of one partition, the assigned partitions in turns (see
   * fair-partition-buffer.ts). Rebalance callbacks fire inside the native reads. When the signal
   * fires, the poll rejects at once and a native read in flight runs on (it cannot be
   * cancelled): its records are dropped. That is safe because the group only abandons a poll for
   * a rebalance or a stop, so the next poll follows an explicit assignment from PostgreSQL (or an
   * unassign), which also empties the buffers, and `assign` waits for the abandoned read first
   * (see there). A poll that would read on past dropped records without one is refused (an
   * invariant, not a user error).
   */
  async poll(maxRecords: number, signal: AbortSignal): Promise<readonly SourceRecord[]> {
    signal.throwIfAborted();
    this.throwIfUnusable('poll');
    assertInvariant(Number.isSafeInteger(maxRecords) && maxRecords >= 1, `poll of ${maxRecords} records`);
    // One native consume at a time: wait for one abandoned by an earlier, aborted poll.
    await untilAborted(this.nativeConsume, signal, 'polling the source');
    this.throwIfUnusable('poll');
    // librdkafka's fetch position moved past the records an abandoned poll dropped: reading on
    // without a new explicit assignment would skip them, and the store accepts offset gaps.
    assertInvariant(
      this.droppedRecords === 0,
      `a poll after ${this.droppedRecords} polled records were dropped, without a new assignment: they would be skipped`,
    );
    const waitMs = this.assigned ? this.pollWaitMs : Math.min(this.pollWaitMs, unassignedPollWaitMs);
    return this.buffer.poll(maxRecords, waitMs, this.queueReader(signal));
  }

  /** librdkafka's queue as the buffers read it, within this poll's signal. */
  private queueReader(signal: AbortSignal): QueueReader {
    const flowCall = (what: 'pause' | 'resume', partitions: readonly number[]) => {
      try {
        this.consumer[what](this.topicPartitions(partitions));
      } catch (error) {
        throw operationalError(
          `cannot ${what} source partitions ${partitions.join(', ')}: ${describeKafkaError(error)}`,
          error,
        );
      }
    };
    return {
      read: (maxRecords, waitMs) => this.consumeNative(maxRecords, waitMs, signal),
      pause: (partitions) => flowCall('pause', partitions),
      resume: (partitions) => flowCall('resume', partitions),
    };
  }

  /** One native `consume(maxRecords)` that waits up to `waitMs` for its first record. */
  private async consumeNative(maxRecords: number, waitMs: number, signal: AbortSignal): Promise<SourceRecord[]> {
    signal.throwIfAborted();
    this.consumer.setDefaultConsumeTimeout(waitMs);
    const messages = new Promise<RdKafka.Message[]>((resolve, reject) => {
      try {
        this.consumer.consume(maxRecords, (error, batch) => (error ? reject(error) : resolve(batch)));
      } catch (error) {
        reject(error);
      }
    });
    let abandoned = false;
    this.nativeConsume = messages.then(
      (late) => {
        if (abandoned) this.droppedRecords += late.length;
      },
      () => {},
    );
    let batch: RdKafka.Message[];
    try {
      batch = await untilAborted(messages, signal, 'polling the source');
    } catch (error) {
      if (signal.aborted) {
        abandoned = true;
        throw error;
      }
      throw this.pollError(error);
    }
    return batch.map((message) => polledRecord(message, this.options.topic));
  }

  /** An application pause outlives unassign / assign in librdkafka: lift every one we made. */
  private resumePaused(): void {
    const paused = this.buffer.pausedPartitions();
    if (paused.length > 0) this.consumer.resume(this.topicPartitions(paused));
  }

  private topicPartitions(partitions: readonly number[]): { topic: string; partition: number }[] {
    return partitions.map((partition) => ({ topic: this.options.topic, partition }));
  }

  /**
   * Answers the pending ERR__ASSIGN_PARTITIONS with these partitions at these explicit offsets
   * (docs/design.md#kafka-consumer: assign with offsets in the callback's turn, not `seek`, which fails until
   * the partition is fetching). Partitions of the assignment left out (retired) are not fetched.
   * With no rebalance pending (after riding through an outage), it re-assigns partitions of the
   * group's current assignment at new explicit offsets: librdkafka allows that outside a callback.
   */
  async assign(positions: readonly PartitionPosition[], signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    this.throwIfUnusable('assign');
    const pending = this.pending;
    if (pending?.kind === 'revoke') {
      throw operationalError('assign while a revocation from the group is pending');
    }
    const granted = pending?.partitions ?? this.groupPartitions;
    const seen = new Set<number>();
    for (const { partition, offset } of positions) {
      assertInvariant(granted.includes(partition), `assign of partition ${partition}, not assigned by the group`);
      assertInvariant(!seen.has(partition), `assign of partition ${partition} twice`);
      assertInvariant(Number.isSafeInteger(offset) && offset >= 0, `assign of partition ${partition} at ${offset}`);
      seen.add(partition);
    }
    // A native consume abandoned by an aborted poll may still be running. Assigning now would let
    // it fetch records at the new positions and drop them with that poll: the next poll would
    // then start after them, and the store (which accepts offset gaps) would skip them. So wait
    // for it; it ends within the poll wait.
    await untilAborted(this.nativeConsume, signal, 'assigning the source partitions');
    this.throwIfUnusable('assign');
    try {
      this.resumePaused();
      this.consumer.assign(
        positions.map(({ partition, offset }) => ({ topic: this.options.topic, partition, offset })),
      );
    } catch (error) {
      throw operationalError(`cannot assign the source partitions: ${describeKafkaError(error)}`, error);
    }
    // Records read ahead came from the old positions: from now on, reads start at these.
    this.buffer.reset(positions.map(({ partition }) => partition));
    this.assigned = positions.length > 0;
    this.groupPartitions = granted;
    this.pending = null;
    this.droppedRecords = 0;
  }

  /**
   * Answers the pending revocation (or an assignment given up) by clearing the assignment.
   * Before the consumer is connected and subscribed there is nothing to clear: a stop during
   * `connect` drains through here, and that must not count as a failure.
   */
  async unassign(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (!this.phase.isConnected) return;
    // Let an abandoned native consume finish first, so that what it dropped is counted before
    // the count is cleared here (it ends within the poll wait).
    await untilAborted(this.nativeConsume, signal, 'unassigning the source partitions');
    if (!this.phase.isConnected) return;
    try {
      this.consumer.unassign();
      this.resumePaused();
    } catch (error) {
      throw operationalError(`cannot unassign the source partitions: ${describeKafkaError(error)}`, error);
    }
    this.buffer.reset([]);
    this.assigned = false;
    this.groupPartitions = [];
    this.pending = null;
    this.droppedRecords = 0;
  }

  /**
   * Leaves the group and closes the client, after the group released everything. A rebalance
   * still pending is answered with unassign; the revoke `disconnect()` fires is answered by the
   * callback itself. The close is bounded: past `kafkaClientCloseTimeoutMs` it rejects (the native close
   * runs on in the background).
   */
  close(signal: AbortSignal): Promise<void> {
    this.closing ??= this.closeOnce();
    return untilAborted(this.closing, signal, 'closing the source consumer');
  }

  private async closeOnce(): Promise<void> {
    const wasConnecting = this.phase.startClosing();
    if (wasConnecting) await this.connecting;
    if (this.pending !== null) this.answerWithUnassign(this.consumer);
    if (!this.consumer.isConnected()) {
      this.phase.closed();
      return;
    }
    // The binding's disconnect waits for a running native consume (it takes the connection
    // lock for writing), which ends within the poll wait.
    const disconnected = viaCallback<unknown>((done) => this.consumer.disconnect(done));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(operationalError(`the source consumer did not close within ${kafkaClientCloseTimeoutMs} ms`)),
        kafkaClientCloseTimeoutMs,
      );
    });
    try {
      await Promise.race([disconnected, timedOut]);
    } catch (error) {
      throw operationalError(`cannot close the source consumer: ${describeKafkaError(error)}`, error);
    } finally {
      clearTimeout(timer);
      disconnected.catch(() => {});
      this.phase.closed();
    }
  }

  /** The rebalance callback. Everything is caught: the library ignores its result. */
  private onRebalance(consumer: RdKafka.KafkaConsumer, error: RdKafka.LibrdKafkaError, assignment: unknown): void {
    try {
      if (this.phase.isClosing) {
        // The group has released everything before close: answer librdkafka ourselves so that
        // disconnect() does not wait for an unassign nobody else will make.
        this.answerWithUnassign(consumer);
        return;
      }
      const { request, rebalanceError } = rebalanceRequest(consumer, error, assignment, this.options.topic);
      if (rebalanceError !== null) this.options.onClientError?.(`kafka consumer: rebalance error ${rebalanceError}`);
      this.pending = request;
      if (request.kind === 'assign') this.options.onAssigned(request.partitions);
      else this.options.onRevoked(request.lost);
    } catch (failure) {
      const message = `the rebalance callback failed: ${errorMessage(failure)}`;
      this.callbackFailure ??= operationalError(message, failure);
      this.options.onClientError?.(`kafka consumer: ${message}`);
    }
  }

  private answerWithUnassign(consumer: RdKafka.KafkaConsumer): void {
    try {
      consumer.unassign();
    } catch (error) {
      this.options.onClientError?.(`kafka consumer: unassign while closing failed: ${describeKafkaError(error)}`);
    }
    this.assigned = false;
    this.groupPartitions = [];
    this.pending = null;
  }

  get fencedAsStaticMember(): boolean {
    return this.fenced;
  }

  private pollError(error: unknown): Error {
    const failure = sourcePollFailure(error, this.options.instanceId);
    this.fenced ||= failure.fenced;
    return failure.error;
  }

  /** A fatal error on a commit's answer (seen in chaos: the worker then idled on a dead client)
   * fails the next poll as a fence, so the worker rejoins with a new one (worker-composition.ts). */
  private noteFatal(error: unknown): void {
    if (isFatal(error)) this.callbackFailure ??= this.pollError(error);
  }

  private throwIfUnusable(what: string): void {
    if (this.callbackFailure) throw this.callbackFailure;
    this.phase.throwUnlessConnected(what);
  }
}
