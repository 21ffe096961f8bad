/**
 * The source consumer against the real broker (worker.md §3, library-notes.md): assignments
 * arrive through the rebalance callback and are answered with explicit offsets from "PostgreSQL"
 * (here: the test), group offsets do not matter, read_committed hides aborted data, an eager
 * rebalance waits for our unassign, and an out-of-range position is an error.
 *
 * Each `Member` plays the group actor's part: a serial poll loop; a rebalance callback aborts
 * the running poll (as the runtime does), then the member answers with assign / unassign.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RdKafka } from '@confluentinc/kafka-javascript';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sourceTopicConfig } from '../../src/cli/commands/source-create.js';
import type { FairPartitionBuffer } from '../../src/io/kafka/fair-partition-buffer.js';
import { withKafkaAdmin } from '../../src/io/kafka/kafka-admin.js';
import { KafkaSourceConsumer } from '../../src/io/kafka/kafka-source-consumer.js';
import { servesEveryPartition } from '../../src/io/kafka/safe-topic.js';
import {
  type KafkaSourceConsumerOptions,
  sourceConsumerConfig,
  sourceGroupId,
} from '../../src/io/kafka/source-consumer-options.js';
import type { PartitionPosition, SourceRecord } from '../../src/machines/ports.js';
import { testBrokers, testName } from '../support/endpoints.js';
import {
  commitGroupOffset,
  eventually,
  groupOffset,
  numberedRecords,
  sendWithKafkajs,
  TestProducer,
  type TestRecord,
} from '../support/kafka-source-fixtures.js';
import { deleteTestTopics, endOffsets } from '../support/kafka-test-tools.js';

const topics = new Set<string>();
const members: Member[] = [];
const never = new AbortController().signal;

afterEach(async () => {
  await Promise.all(members.splice(0).map((m) => m.stop()));
});

afterAll(async () => {
  await deleteTestTopics(topics);
});

async function sourceTopic(records: readonly TestRecord[] = []): Promise<string> {
  const topic = testName();
  topics.add(topic);
  await withKafkaAdmin(testBrokers, 'amends-test-source-create', async (admin) => {
    expect(
      await admin.createTopic({ topic, partitions: 2, replicationFactor: 1, config: { ...sourceTopicConfig } }),
    ).toEqual({ outcome: 'created' });
    await eventually(
      `topic ${topic} visible with a leader for every partition`,
      async () => (await admin.describeTopic(topic)) !== undefined && (await servesEveryPartition(admin, topic, 2)),
    );
  });
  if (records.length > 0) {
    const producer = await TestProducer.open();
    try {
      await producer.send(topic, records);
    } finally {
      await producer.close();
    }
  }
  return topic;
}

type MemberEvent =
  | { at: number; kind: 'assigned'; partitions: readonly number[] }
  | { at: number; kind: 'revoked'; lost: boolean }
  | { at: number; kind: 'answered'; answer: 'assign' | 'unassign' };

interface MemberBehaviour {
  /** Where each assigned partition starts (the PostgreSQL frontier); default 0. */
  positions?: (partitions: readonly number[]) => PartitionPosition[];
  /** Delay before answering a revocation with unassign. */
  unassignDelayMs?: number;
  maxRecords?: number;
  /** A pause after each poll (the time a decision would take). */
  pollDelayMs?: number;
}

/** A group member driven like the runtime drives it: serial polls, rebalances answered later. */
class Member {
  readonly events: MemberEvent[] = [];
  readonly records: SourceRecord[] = [];
  readonly consumer: KafkaSourceConsumer;
  pollError: unknown;
  private answer: (() => Promise<void>) | null = null;
  private polling: AbortController | null = null;
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    options: Pick<KafkaSourceConsumerOptions, 'namespace' | 'topic'> & Partial<KafkaSourceConsumerOptions>,
    private readonly behaviour: MemberBehaviour = {},
  ) {
    this.consumer = new KafkaSourceConsumer({
      brokers: testBrokers,
      clientId: `amends-test-${name}`,
      ...options,
      onAssigned: (partitions) => {
        this.events.push({ at: performance.now(), kind: 'assigned', partitions });
        this.answer = async () => {
          const positions =
            this.behaviour.positions?.(partitions) ?? partitions.map((partition) => ({ partition, offset: 0 }));
          await this.consumer.assign(positions, never);
          this.events.push({ at: performance.now(), kind: 'answered', answer: 'assign' });
        };
        this.polling?.abort();
      },
      onRevoked: (lost) => {
        this.events.push({ at: performance.now(), kind: 'revoked', lost });
        this.answer = async () => {
          await sleep(this.behaviour.unassignDelayMs ?? 0);
          await this.consumer.unassign(never);
          this.events.push({ at: performance.now(), kind: 'answered', answer: 'unassign' });
        };
        this.polling?.abort();
      },
    });
    members.push(this);
  }

  async start(): Promise<void> {
    await this.consumer.connect(never);
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const answer = this.answer;
      if (answer) {
        this.answer = null;
        await answer();
        continue;
      }
      this.polling = new AbortController();
      try {
        this.records.push(...(await this.consumer.poll(this.behaviour.maxRecords ?? 10, this.polling.signal)));
      } catch (error) {
        if (!this.polling.signal.aborted) {
          this.pollError = error;
          return;
        }
      }
      if (this.behaviour.pollDelayMs !== undefined) await sleep(this.behaviour.pollDelayMs);
    }
  }

  of(kind: MemberEvent['kind']): MemberEvent[] {
    return this.events.filter((e) => e.kind === kind);
  }

  /** Stops polling, unassigns and closes, as the group's draining does. Returns the close time. */
  async stop(): Promise<number> {
    if (this.stopped) return 0;
    this.stopped = true;
    this.polling?.abort();
    await this.loop;
    await this.consumer.unassign(never).catch(() => {});
    const started = performance.now();
    await this.consumer.close(never);
    return performance.now() - started;
  }
}

function markerWritten(topic: string, end: number): Promise<void> {
  return eventually(`partition 0 of ${topic} ends at ${end}`, async () => (await endOffsets(topic, 1))[0] === end);
}

/** The longest run of equal consecutive values. */
function longestRun(values: readonly number[]): number {
  let longest = 0;
  for (let i = 0, run = 0; i < values.length; i++) {
    run = i > 0 && values[i] === values[i - 1] ? run + 1 : 1;
    longest = Math.max(longest, run);
  }
  return longest;
}

function bytes(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text));
}

describe('kafka source consumer', () => {
  it('configures the group as worker.md §3 says', () => {
    const { global, topic } = sourceConsumerConfig({
      brokers: testBrokers,
      namespace: 'ns-1',
      topic: 't',
      instanceId: 'worker-a',
    });
    expect(sourceGroupId('ns-1')).toBe('amends.ns-1.source');
    expect(global).toMatchObject({
      'group.id': 'amends.ns-1.source',
      'group.protocol': 'classic',
      'partition.assignment.strategy': 'range',
      'enable.auto.commit': false,
      'enable.auto.offset.store': false,
      'isolation.level': 'read_committed',
      'session.timeout.ms': 6000,
      'max.poll.interval.ms': 60000,
      'group.instance.id': 'worker-a',
      // A resumed partition fetches again within 10 ms, not librdkafka's 1 s (fair-partition-buffer.ts).
      'fetch.queue.backoff.ms': 10,
    });
    expect(topic).toEqual({ 'auto.offset.reset': 'error' });
    expect(sourceConsumerConfig({ brokers: testBrokers, namespace: 'n', topic: 't' }).global).not.toHaveProperty(
      'group.instance.id',
    );
  });

  it('gets both partitions, starts at the explicit offsets, and returns the bytes exactly as written', async () => {
    const special: TestRecord[] = [
      { partition: 0, key: null, value: Buffer.from('no key') },
      { partition: 0, key: Buffer.from('tombstone'), value: null },
      { partition: 0, key: Buffer.from([0, 255, 10]), value: Buffer.from([0xc3, 0x28, 0, 1]) },
    ];
    const topic = await sourceTopic([...numberedRecords(0, 3), ...special, ...numberedRecords(1, 2)]);
    // Empty, non-null bytes: written with kafkajs (this library's producer writes them as null).
    await sendWithKafkajs(topic, [{ partition: 0, key: Buffer.alloc(0), value: Buffer.alloc(0) }]);
    const member = new Member(
      'single',
      { namespace: testName('ns'), topic },
      {
        positions: (parts) => parts.map((partition) => ({ partition, offset: partition === 0 ? 3 : 1 })),
      },
    );
    const started = performance.now();
    await member.start();
    await eventually('records from both partitions', async () => member.records.length >= 5);
    await sleep(300); // nothing more arrives
    console.info(`single member: ASSIGN ${(member.events[0]?.at ?? Number.NaN) - started} ms after connect`);

    expect(member.events.map((e) => e.kind)).toEqual(['assigned', 'answered']);
    expect(member.of('assigned')[0]).toMatchObject({ partitions: [0, 1] });
    const byPartition = (p: number) => member.records.filter((r) => r.partition === p);
    expect(byPartition(0)).toEqual([
      { partition: 0, offset: 3, key: null, value: bytes('no key') },
      { partition: 0, offset: 4, key: bytes('tombstone'), value: null },
      { partition: 0, offset: 5, key: new Uint8Array([0, 255, 10]), value: new Uint8Array([0xc3, 0x28, 0, 1]) },
      // Empty bytes stay empty, distinct from null.
      { partition: 0, offset: 6, key: new Uint8Array(0), value: new Uint8Array(0) },
    ]);
    expect(byPartition(1)).toEqual([
      { partition: 1, offset: 1, key: bytes('record-key-1-1'), value: bytes('record-value-1-1') },
    ]);
    for (const r of member.records) {
      for (const data of [r.key, r.value])
        if (data !== null) expect(Object.getPrototypeOf(data)).toBe(Uint8Array.prototype);
      expect(Number.isSafeInteger(r.offset)).toBe(true);
    }
    expect(member.pollError).toBeUndefined();
  });

  it('ignores the group committed offset: PostgreSQL frontier 1 wins over group offset 5', async () => {
    const topic = await sourceTopic(numberedRecords(0, 8));
    const namespace = testName('ns');
    await commitGroupOffset(sourceGroupId(namespace), topic, 0, 5);
    expect(await groupOffset(sourceGroupId(namespace), topic, 0)).toBe(5);
    const member = new Member(
      'frontier',
      { namespace, topic },
      {
        // Partition 1 is empty: its frontier is 0. At 1 it would be out of range, and that
        // error could end the polls before partition 0's records arrived (a CI failure).
        positions: (parts) => parts.map((partition) => ({ partition, offset: partition === 0 ? 1 : 0 })),
      },
    );
    await member.start();
    await eventually('seven records', async () => member.records.length >= 7 || member.pollError !== undefined);
    expect(member.pollError).toBeUndefined();
    expect(member.records.map((r) => r.offset)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('read_committed: aborted records and control records leave gaps; an open transaction holds reads back', async () => {
    const topic = await sourceTopic();
    const plain = await TestProducer.open();
    const transactional = await TestProducer.open(`amends-test-tx-${testName()}`);
    const member = new Member('committed-reader', { namespace: testName('ns'), topic });
    try {
      await plain.send(topic, numberedRecords(0, 2, 'before')); // 0, 1
      await transactional.beginTransaction();
      await transactional.send(topic, numberedRecords(0, 3, 'aborted')); // 2, 3, 4
      await transactional.abortTransaction(); // abort marker at 5
      // The coordinator writes markers after EndTxn answers: wait for it, or 'after' could land first.
      await markerWritten(topic, 6);
      await plain.send(topic, numberedRecords(0, 2, 'after')); // 6, 7
      await transactional.beginTransaction();
      await transactional.send(topic, numberedRecords(0, 2, 'committed')); // 8, 9
      await transactional.commitTransaction(); // commit marker at 10
      await markerWritten(topic, 11);
      await transactional.beginTransaction();
      await transactional.send(topic, numberedRecords(0, 1, 'open')); // 11, not yet committed
      await plain.send(topic, numberedRecords(0, 1, 'behind-open')); // 12: above the last stable offset

      await member.start();
      await eventually('the committed records', async () => member.records.length >= 6);
      await sleep(500);
      expect(member.records.map((r) => r.offset)).toEqual([0, 1, 6, 7, 8, 9]);
      expect(member.records.map((r) => Buffer.from(r.value ?? []).toString())).toEqual([
        'before-value-0-0',
        'before-value-0-1',
        'after-value-0-0',
        'after-value-0-1',
        'committed-value-0-0',
        'committed-value-0-1',
      ]);

      await transactional.commitTransaction(); // marker at 13
      await eventually('the records behind the transaction', async () => member.records.length >= 8);
      expect(member.records.map((r) => r.offset).slice(6)).toEqual([11, 12]);
    } finally {
      await transactional.close();
      await plain.close();
    }
  });

  it('eager rebalance: a second member revokes the first, which the group waits for, then range splits', async () => {
    const topic = await sourceTopic([...numberedRecords(0, 2), ...numberedRecords(1, 2)]);
    const namespace = testName('ns');
    const unassignDelayMs = 1_500;
    const first = new Member('first', { namespace, topic }, { unassignDelayMs });
    await first.start();
    await eventually('first member assigned', async () => first.of('answered').length === 1);
    expect(first.of('assigned')[0]).toMatchObject({ partitions: [0, 1] });

    const second = new Member('second', { namespace, topic }, { unassignDelayMs });
    const secondJoined = performance.now();
    await second.start();
    await eventually(
      'both members assigned again',
      async () => second.of('answered').length === 1 && first.of('answered').length === 3,
      20_000,
    );

    const revoked = first.of('revoked')[0];
    const unassigned = first.events.find((e) => e.kind === 'answered' && e.answer === 'unassign');
    const secondAssigned = second.of('assigned')[0];
    const firstReassigned = first.of('assigned')[1];
    expect(revoked).toMatchObject({ lost: false });
    // Eager: the whole assignment was revoked first, and nobody got partitions until we unassigned.
    expect(first.events.map((e) => e.kind)).toEqual([
      'assigned',
      'answered',
      'revoked',
      'answered',
      'assigned',
      'answered',
    ]);
    expect(second.events.map((e) => e.kind)).toEqual(['assigned', 'answered']);
    const held = (secondAssigned?.at ?? 0) - (revoked?.at ?? 0);
    expect(held).toBeGreaterThanOrEqual(unassignDelayMs - 50);
    expect(secondAssigned?.at).toBeGreaterThan(unassigned?.at ?? Number.POSITIVE_INFINITY);
    console.info(
      `rebalance: revoke ${((revoked?.at ?? 0) - secondJoined).toFixed(0)} ms after the second member connected; ` +
        `second's assignment ${held.toFixed(0)} ms after the revoke (unassign delayed ${unassignDelayMs} ms), ` +
        `${((secondAssigned?.at ?? 0) - (unassigned?.at ?? 0)).toFixed(0)} ms after the unassign`,
    );
    // Range over one topic with two partitions and two members: one partition each.
    const split = [
      ...((firstReassigned as unknown as { partitions: number[] } | undefined)?.partitions ?? []),
      ...((secondAssigned as unknown as { partitions: number[] } | undefined)?.partitions ?? []),
    ].sort();
    expect(split).toEqual([0, 1]);
    expect((firstReassigned as unknown as { partitions: number[] }).partitions).toHaveLength(1);

    // Each reads its partition from offset 0 again (positions come from the store, here 0).
    await eventually('second member read its partition', async () => second.records.length >= 2);
    const secondPartition = (secondAssigned as unknown as { partitions: number[] }).partitions[0];
    expect(second.records.map((r) => [r.partition, r.offset])).toEqual([
      [secondPartition, 0],
      [secondPartition, 1],
    ]);
    const closeMs = await second.stop();
    console.info(`close of a member with an active (already unassigned) group membership: ${closeMs.toFixed(0)} ms`);
    expect(closeMs).toBeLessThan(5_000);
  });

  it('an assignment outside the retained range is an error (auto.offset.reset=error), not a silent jump', async () => {
    const topic = await sourceTopic(numberedRecords(0, 3));
    const member = new Member(
      'out-of-range',
      { namespace: testName('ns'), topic },
      {
        positions: (parts) => parts.map((partition) => ({ partition, offset: partition === 0 ? 10 : 0 })),
      },
    );
    await member.start();
    await eventually('a poll error', async () => member.pollError !== undefined, 15_000);
    console.info(`out-of-range poll error: ${(member.pollError as Error).message}`);
    expect(String((member.pollError as Error).message)).toMatch(
      /no valid position \(auto\.offset\.reset=error\).*-140/,
    );
    expect(member.records).toEqual([]);
  });

  it('a stop while connecting: unassign is a no-op and close waits for the connect, then disconnects', async () => {
    const topic = await sourceTopic();
    const consumer = new KafkaSourceConsumer({
      brokers: testBrokers,
      namespace: testName('ns'),
      topic,
      onAssigned: () => {},
      onRevoked: () => {},
    });
    const controller = new AbortController();
    const connecting = consumer.connect(controller.signal);
    controller.abort();
    await expect(connecting).rejects.toMatchObject({ name: 'AbortError' });
    await consumer.unassign(never);
    await consumer.close(never);
    await expect(consumer.poll(1, never)).rejects.toThrow(/closed/);
  });

  it('close answers a rebalance nobody answered, and a revoke fired by disconnect, without deadlock', async () => {
    const topic = await sourceTopic(numberedRecords(0, 1));
    // Pending ASSIGN never answered: close must answer it.
    const assignedOnly: number[][] = [];
    const unanswered = new KafkaSourceConsumer({
      brokers: testBrokers,
      namespace: testName('ns'),
      topic,
      onAssigned: (partitions) => assignedOnly.push([...partitions]),
      onRevoked: () => {},
    });
    await unanswered.connect(never);
    const deadline = Date.now() + 15_000;
    while (assignedOnly.length === 0 && Date.now() < deadline) await unanswered.poll(1, never);
    expect(assignedOnly, 'the assignment within 15 s').toEqual([[0, 1]]);
    let started = performance.now();
    await unanswered.close(never);
    const pendingCloseMs = performance.now() - started;

    // An active assignment (not unassigned before close): disconnect fires the revoke itself.
    const revokes: boolean[] = [];
    const active = new KafkaSourceConsumer({
      brokers: testBrokers,
      namespace: testName('ns'),
      topic,
      onAssigned: () => {},
      onRevoked: (lost) => revokes.push(lost),
    });
    // The library's own 'rebalance' event, to see the revoke that disconnect() fires.
    const rawRebalances: number[] = [];
    (active as unknown as { consumer: RdKafka.KafkaConsumer }).consumer.on('rebalance', (error) => {
      rawRebalances.push(error.code);
    });
    await active.connect(never);
    const records: SourceRecord[] = [];
    const until = Date.now() + 15_000;
    while (records.length === 0 && Date.now() < until) {
      const controller = new AbortController();
      const poll = active.poll(1, controller.signal);
      const result = await poll.catch(() => []);
      records.push(...result);
      await active.assign([{ partition: 0, offset: 0 }], never).catch(() => {});
    }
    expect(
      records.map((r) => r.offset),
      'the record at offset 0 within 15 s',
    ).toEqual([0]);
    started = performance.now();
    await active.close(never);
    const activeCloseMs = performance.now() - started;
    console.info(
      `close: with an unanswered ASSIGN ${pendingCloseMs.toFixed(0)} ms; with an active assignment ${activeCloseMs.toFixed(0)} ms`,
    );
    // ASSIGN, then the REVOKE disconnect() fired: answered by the adapter, not forwarded.
    expect(rawRebalances).toEqual([
      RdKafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS,
      RdKafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS,
    ]);
    expect(revokes).toEqual([]);
    expect(pendingCloseMs).toBeLessThan(5_000);
    expect(activeCloseMs).toBeLessThan(5_000);
    await expect(active.poll(1, never)).rejects.toThrow(/closed/);
  });

  it('static membership (--instance-id): a restarted member reclaims its partition, the other sees no rebalance', async () => {
    const topic = await sourceTopic([...numberedRecords(0, 1), ...numberedRecords(1, 1)]);
    const namespace = testName('ns');
    const first = new Member('static-a', { namespace, topic, instanceId: 'worker-a' });
    await first.start();
    await eventually('first member assigned', async () => first.of('answered').length === 1);
    const second = new Member('static-b', { namespace, topic, instanceId: 'worker-b' });
    await second.start();
    await eventually(
      'rebalanced over two members',
      async () => second.of('answered').length === 1 && first.of('answered').length === 3,
      20_000,
    );
    const firstPartitions = (first.of('assigned')[1] as { partitions: readonly number[] }).partitions;
    const secondEvents = second.events.length;

    // A static member leaves no LeaveGroup behind on close: the group keeps its place.
    await first.stop();
    const restarted = new Member('static-a-again', { namespace, topic, instanceId: 'worker-a' });
    const restartedAt = performance.now();
    await restarted.start();
    await eventually('the restarted member assigned', async () => restarted.of('answered').length === 1, 20_000);
    const reclaimedMs = (restarted.of('assigned')[0]?.at ?? 0) - restartedAt;
    console.info(
      `static membership: the restarted member got its assignment ${reclaimedMs.toFixed(0)} ms after connect`,
    );
    expect(restarted.of('assigned')[0]).toMatchObject({ partitions: firstPartitions });
    await sleep(500);
    expect(second.events.length).toBe(secondEvents);
  });

  it('an aborted poll rejects at once and loses no record: the next assignment starts where it says', async () => {
    const topic = await sourceTopic(numberedRecords(1, 3));
    const assigned: number[][] = [];
    const consumer = new KafkaSourceConsumer({
      brokers: testBrokers,
      namespace: testName('ns'),
      topic,
      pollWaitMs: 1_000,
      onAssigned: (partitions) => assigned.push([...partitions]),
      onRevoked: () => {},
    });
    try {
      await consumer.connect(never);
      // Abort the poll the assignment arrives in, then assign at once (before its native call ends).
      let answeredAfterMs = 0;
      const deadline = Date.now() + 15_000;
      while (assigned.length === 0 && Date.now() < deadline) {
        const controller = new AbortController();
        const poll = consumer.poll(10, controller.signal);
        const check = setInterval(() => {
          if (assigned.length > 0) controller.abort();
        }, 5);
        const started = performance.now();
        await poll.catch(() => {});
        clearInterval(check);
        if (assigned.length > 0) {
          expect(performance.now() - started).toBeLessThan(1_000);
          const assignStarted = performance.now();
          await consumer.assign([{ partition: 1, offset: 0 }], never);
          answeredAfterMs = performance.now() - assignStarted;
        }
      }
      expect(assigned.length, 'an assignment within 15 s').toBeGreaterThan(0);
      console.info(
        `assign waited ${answeredAfterMs.toFixed(0)} ms for the abandoned native consume (poll wait 1000 ms)`,
      );
      // With nothing assigned a poll waits unassignedPollWaitMs, not the full 1000 ms, so the
      // read that served the assignment ends soon after it (it waited ~960 ms before).
      expect(answeredAfterMs).toBeLessThan(500);
      const records: SourceRecord[] = [];
      const until = Date.now() + 10_000;
      while (records.length < 3 && Date.now() < until) records.push(...(await consumer.poll(10, never)));
      expect(
        records.map((r) => [r.partition, r.offset]),
        'partition 1, offsets 0-2, within 10 s',
      ).toEqual([
        [1, 0],
        [1, 1],
        [1, 2],
      ]);

      // A poll abandoned while its native call then fetches a record: reading on without a new
      // assignment would skip that record, so the next poll is refused.
      const producer = await TestProducer.open();
      try {
        const controller = new AbortController();
        const abandoned = consumer.poll(10, controller.signal);
        await sleep(50);
        controller.abort();
        await expect(abandoned).rejects.toMatchObject({ name: 'AbortError' });
        await producer.send(topic, numberedRecords(1, 1, 'late')); // within the native call's 1 s wait
      } finally {
        await producer.close();
      }
      await expect(consumer.poll(10, never)).rejects.toThrow(/1 polled records were dropped/);
      await consumer.unassign(never);
    } finally {
      await consumer.close(never);
    }
  });

  it('takes two backlogged partitions in turns through pauses and resumes, and a rebalance lifts every pause', async () => {
    const perPartition = 2_000;
    const topic = await sourceTopic([...numberedRecords(0, perPartition), ...numberedRecords(1, perPartition)]);
    const namespace = testName('ns');
    // A share of 200 records a partition: a partition is paused at 200 and resumed at 100, so
    // with a poll every 20 ms each stays paused about 4 s after each refill.
    const options = { namespace, topic, bufferLimits: { records: 400, bytes: 1_048_576 } };
    const pace: MemberBehaviour = { maxRecords: 1, pollDelayMs: 20 };
    const first = new Member('fair-first', options, pace);
    await first.start();
    await eventually('the first member read 200 records', async () => first.records.length >= 200, 20_000);
    const early = first.records.slice(0, 200);
    const runs = longestRun(early.map((r) => r.partition));
    for (const p of [0, 1]) {
      const offsets = early.filter((r) => r.partition === p).map((r) => r.offset);
      expect(offsets, `partition ${p} in order from 0`).toEqual(offsets.map((_, i) => i));
    }
    console.info(
      `fair read-ahead: of the first 200 records ${early.filter((r) => r.partition === 0).length} of partition 0, longest run of one partition ${runs}`,
    );
    expect(runs).toBeLessThanOrEqual(2);

    // librdkafka keeps an application pause through unassign and assign: rebalance while both
    // partitions are paused, so a pause the adapter did not lift would silence the first member.
    const buffer = (first.consumer as unknown as { buffer: FairPartitionBuffer }).buffer;
    await eventually('both partitions paused', async () => buffer.pausedPartitions().length === 2, 20_000);
    const second = new Member('fair-second', options, { maxRecords: 100 });
    await second.start();
    // Once the revocation is answered (the pauses were in place until then), read on quickly.
    await eventually('the first member unassigned', async () => first.of('answered').length >= 2, 20_000);
    Object.assign(pace, { maxRecords: 100, pollDelayMs: undefined });
    // After the eager rebalance each member reads its one partition from offset 0 (the store's
    // position here) to the end: a pause left over from before would keep the first one silent.
    const readAgain = (member: Member) => {
      const last = member.records.findLastIndex((r) => r.offset === 0);
      return last < 0 ? [] : member.records.slice(last);
    };
    const complete = (member: Member) => {
      const records = readAgain(member);
      const partition = records[0]?.partition;
      return records.length === perPartition && records.every((r, i) => r.partition === partition && r.offset === i);
    };
    await eventually(
      'each member read its partition again, whole and in order',
      async () =>
        second.of('answered').length === 1 && first.of('answered').length === 3 && complete(first) && complete(second),
      40_000,
    );
    expect(new Set([readAgain(first)[0]?.partition, readAgain(second)[0]?.partition])).toEqual(new Set([0, 1]));
    expect(first.pollError).toBeUndefined();
    expect(second.pollError).toBeUndefined();
  });
});
