/**
 * A worker the group fences as a static member (KIP-345): librdkafka makes that its one fatal
 * consumer error, and a coordinator failover can replay an earlier join of the worker's own
 * client (the chaos run met it: `Local: Fatal error (code -150)`). The worker does in-process
 * what a restart would do, once per outage budget: a new consumer, fresh claims, and on.
 *
 * The fence is made for real: a second client joins the worker's group with its
 * group.instance.id, which is what the broker answers with FENCED_INSTANCE_ID.
 */
import { RdKafka } from '@confluentinc/kafka-javascript';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireBuild } from '../support/amendsctl-process.js';
import { testBrokers } from '../support/endpoints.js';
import { TestProducer } from '../support/kafka-source-fixtures.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { expectFailedExit, post, stockKey, waitUntil } from '../support/worker-fault-harness.js';
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

function call<T>(start: (done: (error: unknown, result?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => start((e, r) => (e ? reject(e) : resolve(r as T))));
}

/** Joins the worker's group under its group.instance.id until the group assigns it, then leaves. */
async function impostorJoins(source: TestSource): Promise<void> {
  let assigned = false;
  const impostor = new RdKafka.KafkaConsumer(
    {
      'bootstrap.servers': testBrokers,
      'group.id': `amends.${source.namespace}.source`,
      'group.instance.id': instanceId,
      'enable.auto.commit': false,
      'partition.assignment.strategy': 'range',
      rebalance_cb: function (
        this: RdKafka.KafkaConsumer,
        error: RdKafka.LibrdKafkaError,
        partitions: RdKafka.Assignment[],
      ) {
        if (error.code === RdKafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
          this.assign(partitions);
          assigned = true;
        } else this.unassign();
      },
    },
    { 'auto.offset.reset': 'latest' },
  );
  await call((done) => impostor.connect({ timeout: 10_000 }, done));
  try {
    impostor.subscribe([source.topic]);
    const deadline = Date.now() + 30_000;
    while (!assigned && Date.now() < deadline) await call((done) => impostor.consume(1, done)).catch(() => {});
    expect(assigned, 'the impostor joined the group').toBe(true);
  } finally {
    await call((done) => impostor.disconnect(done)).catch(() => {});
  }
}

const decidedCount = (source: TestSource) => probe.decisionOffsets(source.namespace, 0).then((o) => o.length);

describe('amends worker: fenced as a static member', () => {
  it('rejoins once with a new consumer and decides on; fenced again within the budget, exits 1', async () => {
    const source = await createSource(topics);
    await publish(source, 0, 3);
    const worker = startWorker({
      manifestPath: source.manifestPath,
      instanceId,
      extraArgs: ['--outage-budget-s', '30'],
    });
    await waitUntil(
      'the first records decided',
      () => decidedCount(source),
      (n) => n === 3,
      30_000,
    );

    await impostorJoins(source);
    const rejoined = await worker.waitForLog('worker_rejoining', (l) => l.msg === 'worker_rejoining', 30_000);
    expect(String(rejoined.detail)).toMatch(`fenced this consumer as static member ${instanceId}`);
    await publish(source, 3, 3);
    await waitUntil(
      'the records after the rejoin decided',
      () => decidedCount(source),
      (n) => n === 6,
      30_000,
    );
    expect(worker.exitStatus).toBeUndefined();

    await impostorJoins(source);
    const diagnostic = await expectFailedExit(worker);
    expect(diagnostic).toMatch(
      new RegExp(
        `^amends worker: the group fenced this consumer as static member ${instanceId}: .*\\(consumer_failed\\)$`,
      ),
    );
  }, 150_000);
});
