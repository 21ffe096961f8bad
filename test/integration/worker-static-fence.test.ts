/**
 * A worker the group fences as a static member (KIP-345): librdkafka makes that its one fatal
 * consumer error, and a coordinator failover can replay an earlier join of the worker's own
 * client (the chaos run met it: `Local: Fatal error (code -150)`). The worker does in-process
 * what a restart would do, once per outage budget: a new consumer, fresh claims, and on.
 *
 * The fence is made for real: a second client joins the worker's group with its
 * group.instance.id, which is what the broker answers with FENCED_INSTANCE_ID.
 *
 * A second *worker* started with an --instance-id a live worker uses is refused before it
 * joins (its heartbeat row is beaten by another process, live-twin.ts): the broker would fence
 * the healthy one otherwise.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireBuild } from '../support/amendsctl-process.js';
import { TestProducer } from '../support/kafka-source-fixtures.js';
import { deleteTestTopics, joinAsStaticMember } from '../support/kafka-test-tools.js';
import { expectFailedExit, post, stockKey } from '../support/worker-fault-harness.js';
import { createSource, StoreProbe, startWorker, stopAllWorkers, type TestSource } from '../support/worker-process.js';

const topics = new Set<string>();
const probe = new StoreProbe();
let producer: TestProducer;
const instanceId = `fence-${process.pid}`;

beforeAll(async () => {
  requireBuild();
  producer = await TestProducer.open();
});
afterEach(stopAllWorkers);
afterAll(async () => {
  await stopAllWorkers();
  await producer?.close();
  await probe.close();
  await deleteTestTopics(topics);
});

async function publish(source: TestSource, from: number, count: number): Promise<void> {
  const records = Array.from({ length: count }, (_, i) => ({
    partition: 0,
    key: stockKey(),
    value: post(`T${from + i}`, 1, '2026-03-02', 1),
  }));
  await producer.send(source.topic, records);
}

/** A second client joins the worker's group under its group.instance.id: the broker fences the worker. */
async function impostorJoins(source: TestSource): Promise<void> {
  const joined = await joinAsStaticMember(`amends.${source.namespace}.source`, instanceId, source.topic);
  expect(joined, 'the impostor joined the group').toBe(true);
}

describe('amends worker: fenced as a static member', () => {
  it('rejoins once with a new consumer and decides on; fenced again within the budget, exits 1', async () => {
    const source = await createSource(topics);
    await publish(source, 0, 3);
    const worker = startWorker({
      manifestPath: source.manifestPath,
      instanceId,
      extraArgs: ['--outage-budget-s', '30'],
    });
    await probe.waitForFrontiers(source.namespace, new Map([[0, 3]]));

    await impostorJoins(source);
    const rejoined = await worker.waitForLog('worker_rejoining', (l) => l.msg === 'worker_rejoining');
    expect(String(rejoined.detail)).toMatch(`fenced this consumer as static member ${instanceId}`);
    await publish(source, 3, 3);
    await probe.waitForFrontiers(source.namespace, new Map([[0, 6]]));
    expect(worker.exitStatus).toBeUndefined();

    await impostorJoins(source);
    const diagnostic = await expectFailedExit(worker);
    expect(diagnostic).toMatch(
      new RegExp(
        `^amends worker: fenced again as static member ${instanceId} within the outage budget: another process joined the consumer group with --instance-id ${instanceId} and took this one's place; give each worker its own --instance-id \\(consumer_failed\\)$`,
      ),
    );
  });
});

describe('amends worker: started with an --instance-id a live worker uses', () => {
  it('is refused before it joins, in one line naming the id; the running worker is not fenced', async () => {
    const source = await createSource(topics);
    await publish(source, 0, 3);
    const id = `twin-${process.pid}`;
    const running = startWorker({ manifestPath: source.manifestPath, instanceId: id });
    await probe.waitForFrontiers(source.namespace, new Map([[0, 3]]));

    const twin = startWorker({ manifestPath: source.manifestPath, instanceId: id });
    // Its one fatal line, the last, as a person reads it (the log is JSON to the end).
    expect(await expectFailedExit(twin)).toMatch(
      new RegExp(
        `^amends worker: another process \\(pid ${running.pid}\\) is running with --instance-id ${id} in namespace ${source.namespace}: it beat its heartbeat \\d+ ms ago; joining would fence it out of the consumer group: give each worker its own --instance-id, or stop that one first$`,
      ),
    );
    expect(twin.messages('worker_started')).toHaveLength(0);

    await publish(source, 3, 3);
    await probe.waitForFrontiers(source.namespace, new Map([[0, 6]]));
    expect(running.exitStatus).toBeUndefined();
    expect(running.messages('worker_rejoining')).toHaveLength(0);
  });
});
