/**
 * Fairness across partitions (worker.md §4: processing is serial across the partitions a
 * process owns): one `amends worker` at --batch-size 1 owning two backlogged partitions must
 * interleave them, not decide one partition's whole fetched backlog before the other's first
 * record. librdkafka queues each partition's fetched record batches one after the other (a
 * producer batch of a quickly loaded backlog holds thousands of records), so a plain
 * `consume(1)` loop drains one partition before it sees the other.
 *
 * Real processes, the real broker and PostgreSQL: the backlog is loaded by the real
 * source-load, before the worker starts; the figures come from the decisions' commit times.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fillerLines } from '../../src/domain/filler-load.js';
import { requireBuild } from '../support/amendsctl-process.js';
import { twoKeysConfig } from '../support/fixture-stories.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import {
  createSource,
  loadFile,
  StoreProbe,
  scratchFile,
  startWorker,
  stopAllWorkers,
} from '../support/worker-process.js';

const topics = new Set<string>();
const probe = new StoreProbe();
/** Per partition: far more than one worker decides in a second at batch size 1. */
const backlogPerPartition = 4_000;
/** The bound: both frontiers move within the first second of work. */
const firstWorkWindowMs = 1_000;
/** Past the window: the worker's last commits of the window are visible by then. */
const windowMarginMs = 500;

beforeAll(() => requireBuild());
afterEach(() => stopAllWorkers());
afterAll(async () => {
  await stopAllWorkers();
  await probe.close();
  await deleteTestTopics(topics);
});

/** widget@berlin (partition 0) and gadget@paris (partition 1) of two-keys.config.json, alternating. */
function backlogText(): string {
  const lines = (item: string, location: string, stage: string) =>
    fillerLines({ item, location, stage, count: backlogPerPartition, firstDay: '2026-03-02' });
  const zero = lines('widget', 'berlin', 'P0');
  const one = lines('gadget', 'paris', 'P1');
  return zero
    .flatMap((line, i) => [line, one[i]])
    .map((line) => `${JSON.stringify(line)}\n`)
    .join('');
}

interface FirstWork {
  /** Per partition: ms from the namespace's first decision to the partition's first. */
  firstAfterMs: Map<number, number>;
  /** Per partition: decisions committed within `firstWorkWindowMs` of the first decision. */
  inWindow: Map<number, number>;
}

async function firstWork(namespace: string): Promise<FirstWork> {
  const { rows } = await probe.pool.query(
    `WITH d AS (SELECT partition, decided_at FROM decisions WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1)),
          t0 AS (SELECT min(decided_at) AS at FROM d)
     SELECT partition,
            extract(epoch FROM min(decided_at) - (SELECT at FROM t0)) * 1000 AS first_after_ms,
            count(*) FILTER (WHERE decided_at < (SELECT at FROM t0) + $2 * interval '1 millisecond') AS in_window
       FROM d GROUP BY partition ORDER BY partition`,
    [namespace, firstWorkWindowMs],
  );
  return {
    firstAfterMs: new Map(rows.map((r) => [r.partition, Number(r.first_after_ms)])),
    inWindow: new Map(rows.map((r) => [r.partition, Number(r.in_window)])),
  };
}

describe('amends worker: two backlogged partitions, one worker', () => {
  it('at --batch-size 1 both frontiers advance within the first second of work, in turns', async () => {
    const source = await createSource(topics, twoKeysConfig);
    const ends = await loadFile(source, scratchFile(`${source.topic}.backlog.jsonl`, backlogText()));
    expect([...ends].sort()).toEqual([
      [0, backlogPerPartition],
      [1, backlogPerPartition],
    ]);
    const worker = startWorker({ manifestPath: source.manifestPath, batchSize: 1 });
    await probe.waitFor('a first decision', source.namespace, (r) => r.some((row) => row.frontier > 0), 60_000);
    // The whole first second of work, and a margin: the worker keeps deciding meanwhile.
    await sleep(firstWorkWindowMs + windowMarginMs);
    const rows = await probe.partitions(source.namespace);
    await worker.stop('SIGTERM');

    const work = await firstWork(source.namespace);
    const inWindow = (p: number) => work.inWindow.get(p) ?? 0;
    console.info(
      `fairness: first decision of each partition after ${JSON.stringify([...work.firstAfterMs])} ms; ` +
        `decisions in the first ${firstWorkWindowMs} ms ${JSON.stringify([...work.inWindow])}; frontiers at the stop ${JSON.stringify(rows.map((r) => r.frontier))}`,
    );
    for (const partition of [0, 1])
      expect(work.firstAfterMs.get(partition) ?? Infinity).toBeLessThan(firstWorkWindowMs);
    // In turns: neither partition gets less than a third of the first second's decisions.
    const total = inWindow(0) + inWindow(1);
    for (const partition of [0, 1]) expect(inWindow(partition)).toBeGreaterThanOrEqual(total / 3);

    // Buffering ahead skipped nothing: each partition decided exactly the offsets below its frontier.
    for (const row of await probe.partitions(source.namespace)) {
      const offsets = await probe.decisionOffsets(source.namespace, row.partition);
      expect(offsets).toEqual(Array.from({ length: row.frontier }, (_, i) => i));
    }
  });
});
