/**
 * kill -9 of real `amends worker` processes (quality.md §1 item 4; the "kill -9 of a
 * worker at random points while the three fixtures load, restart, and export equal to the
 * oracle every time"). A SIGKILL leaves whatever was in flight to PostgreSQL: a commit
 * happened or it did not, and the restarted worker seeks from the durable frontier. Every
 * run ends with `export` equal to `simulate` byte for byte and one decision per offset.
 *
 * The random loop is seeded: AMENDS_TEST_KILL_SEED replays a run, AMENDS_TEST_KILL_RUNS
 * runs more iterations (default 3 in npm test: the deterministic simulation kills at thousands
 * of seeded points, the chaos run under load). The seed is printed.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/domain/seeded-random.js';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import {
  createSource,
  expectExportEqualsSimulate,
  loadFile,
  mergeEnds,
  type PartitionRow,
  StoreProbe,
  scratchFile,
  startWorker,
  stopAllWorkers,
  type TestSource,
  type WorkerProcess,
} from '../support/worker-process.js';

const topics = new Set<string>();
const probe = new StoreProbe();
const fixture = (name: string) => join(repoRoot, 'fixtures', name);
const twoKeysConfig = fixture('two-keys.config.json');

const killRuns = Number(process.env.AMENDS_TEST_KILL_RUNS ?? 3);
const killSeed = Number(process.env.AMENDS_TEST_KILL_SEED ?? Date.now() % 1_000_000_007);
/** The random kill lands this long after the first of the three loads, at most. */
const killDelayMaxMs = 1500;
/** Records of the generated history, split into three loads. */
const generatedRecords = 180;

/**
 * A history for widget/berlin (default config): posts, corrections (a higher revision),
 * cancels, exact redeliveries, stale revisions, conflicting same-revision rewrites and
 * days before the ledger origin. Fixture lines, deterministic from `random`.
 */
function generateHistory(random: () => number, count: number): string[] {
  const key = { item: 'widget', location: 'berlin' };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const day = () => `2026-03-${String(1 + Math.floor(random() * 20)).padStart(2, '0')}`;
  const qty = () => Math.floor(random() * 201) - 100;
  const latest = new Map<string, Record<string, unknown>>();
  const lines: string[] = [];
  const emit = (value: Record<string, unknown>) => lines.push(JSON.stringify({ key, value }));
  while (lines.length < count) {
    const r = random();
    const known = [...latest.keys()];
    if (known.length === 0 || r < 0.4) {
      const txn = `T${latest.size + 1}`;
      const value = { schema: 1, txn, rev: 1, op: 'post', ...key, day: day(), qty: qty() };
      latest.set(txn, value);
      emit(value);
    } else if (r < 0.6) {
      const prev = latest.get(pick(known)) as { txn: string; rev: number };
      const value = { schema: 1, txn: prev.txn, rev: prev.rev + 1, op: 'post', ...key, day: day(), qty: qty() };
      latest.set(prev.txn, value);
      emit(value);
    } else if (r < 0.7) {
      const prev = latest.get(pick(known)) as { txn: string; rev: number };
      const value = { schema: 1, txn: prev.txn, rev: prev.rev + 1, op: 'cancel', ...key };
      latest.set(prev.txn, value);
      emit(value);
    } else if (r < 0.82) {
      emit(latest.get(pick(known)) as Record<string, unknown>); // redelivery
    } else if (r < 0.9) {
      const prev = latest.get(pick(known)) as { txn: string; rev: number };
      if (prev.rev > 1) emit({ schema: 1, txn: prev.txn, rev: 1, op: 'post', ...key, day: day(), qty: qty() }); // stale
    } else if (r < 0.96) {
      const prev = latest.get(pick(known)) as Record<string, unknown>;
      if (prev.op === 'post') emit({ ...prev, qty: (prev.qty as number) + 1 }); // conflict
    } else {
      emit({ schema: 1, txn: `B${lines.length}`, rev: 1, op: 'post', ...key, day: '2026-02-27', qty: qty() });
    }
  }
  return lines;
}

/** Each partition's decisions are exactly the offsets 0..frontier-1, once each. */
async function expectOneDecisionPerOffset(namespace: string, rows: PartitionRow[]): Promise<void> {
  for (const row of rows) {
    const offsets = await probe.decisionOffsets(namespace, row.partition);
    expect(offsets).toEqual(Array.from({ length: row.frontier }, (_, i) => i));
  }
}

function linesText(lines: readonly string[]): string {
  return lines.map((l) => `${l}\n`).join('');
}

beforeAll(() => requireBuild());
afterEach(() => stopAllWorkers());
afterAll(async () => {
  await stopAllWorkers();
  await probe.close();
  await deleteTestTopics(topics);
});

describe('amends worker: SIGKILL and restart with the same --instance-id', () => {
  const stories = ['before.jsonl', 'second-key.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'];
  const allText = () => stories.map((f) => readFileSync(fixture(f), 'utf8')).join('');

  /** Two static members, one partition each; returns them by partition. */
  async function twoWorkers(source: TestSource, batchSize: number) {
    const start = (id: string) => startWorker({ manifestPath: source.manifestPath, instanceId: id, batchSize });
    const workers = new Map<string, WorkerProcess>([
      ['kill-a', start('kill-a')],
      ['kill-b', start('kill-b')],
    ]);
    const split = await probe.waitFor('one partition each', source.namespace, (rows) => {
      const owners = rows.map((r) => r.owner);
      return rows.length === 2 && owners.includes('kill-a') && owners.includes('kill-b');
    });
    return { workers, split, start };
  }

  it.each([1, 500])('after a decided stage and while the next loads, at --batch-size %i', async (batchSize) => {
    const source = await createSource(topics, twoKeysConfig);
    const { workers, split, start } = await twoWorkers(source, batchSize);
    let ends = new Map<number, number>();
    for (const f of ['before.jsonl', 'second-key.jsonl']) ends = mergeEnds(ends, await loadFile(source, fixture(f)));
    await probe.waitForFrontiers(source.namespace, ends);

    // 1. kill -9 the owner of partition 0 once its stage is decided, and restart it under
    // the same instance id: static membership gives it partition 0 back (a new claim, a new
    // epoch) and the other member keeps its partition.
    const victimId = (split[0] as PartitionRow).owner as string;
    const killed = await (workers.get(victimId) as WorkerProcess).kill();
    expect(killed.signal).toBe('SIGKILL');
    const restarted = start(victimId);
    ends = mergeEnds(ends, await loadFile(source, fixture('correction.jsonl')));
    const afterRestart = await probe.waitForFrontiers(source.namespace, ends);
    expect(afterRestart.map((r) => r.owner)).toEqual(split.map((r) => r.owner));
    expect((afterRestart[0] as PartitionRow).epoch).toBeGreaterThan((split[0] as PartitionRow).epoch);
    // The line is written after the commit the frontier shows: wait for it to arrive.
    await restarted.waitForLog('the restarted worker decides', (l) => l.msg === 'process_attempt', 10_000);
    expect(restarted.messages('process_attempt').every((l) => l.partition === 0)).toBe(true);

    // 2. kill -9 it again as the source-load of the last stage starts, so that stage arrives
    // around the kill and the restart. No sleep between them: on a quiet machine the whole
    // load took under 300 ms, and it must still be running when the kill has landed.
    const loading = loadFile(source, fixture('cancel-last-day.jsonl'));
    await restarted.kill();
    expect(await Promise.race([loading.then(() => 'loaded'), sleep(0).then(() => 'loading')])).toBe('loading');
    start(victimId);
    ends = mergeEnds(ends, await loading);
    const rows = await probe.waitForFrontiers(source.namespace, ends);
    expect(rows.map((r) => r.owner)).toEqual(split.map((r) => r.owner));
    expect((rows[0] as PartitionRow).epoch).toBeGreaterThan((afterRestart[0] as PartitionRow).epoch);
    await expectOneDecisionPerOffset(source.namespace, rows);
    await expectExportEqualsSimulate(source, scratchFile(`${source.topic}.all.jsonl`, allText()));
  });
});

describe('amends worker: kill -9 at random points while three loads run', () => {
  it(`${killRuns} seeded runs equal simulate (seed ${killSeed})`, {
    timeout: 30_000 * Math.max(killRuns, 1),
  }, async () => {
    console.log(`worker-kill: seed ${killSeed}, ${killRuns} runs (AMENDS_TEST_KILL_SEED / AMENDS_TEST_KILL_RUNS)`);
    const random = mulberry32(killSeed);
    for (let run = 0; run < killRuns; run += 1) {
      const history = generateHistory(random, generatedRecords);
      const third = Math.ceil(history.length / 3);
      const parts = [0, 1, 2].map((i) => history.slice(i * third, (i + 1) * third));
      const batchSize = [1, 4, 16][Math.floor(random() * 3)] as number;
      const killAfterMs = Math.floor(random() * (killDelayMaxMs + 1));
      const what = `run ${run} (seed ${killSeed}): batch size ${batchSize}, kill after ${killAfterMs} ms`;

      const source = await createSource(topics);
      const files = parts.map((p, i) => scratchFile(`${source.topic}.part${i}.jsonl`, linesText(p)));
      const options = { manifestPath: source.manifestPath, instanceId: 'random-kill', batchSize };
      const first = startWorker(options);
      // Loads start once it owns partition 0, so the kill falls among its decisions.
      await probe.waitFor('the worker claims partition 0', source.namespace, (rows) => rows.length > 0);
      const started = Date.now();
      // The kill clock starts once the first load's records are on the broker, so the kill
      // lands while the worker decides them and while the other two loads run.
      let firstLoaded: () => void = () => {};
      const firstLoadDone = new Promise<void>((resolve) => {
        firstLoaded = resolve;
      });
      const loading = (async () => {
        let ends = new Map<number, number>();
        for (const f of files) {
          ends = mergeEnds(ends, await loadFile(source, f));
          firstLoaded();
        }
        return ends;
      })();
      await Promise.race([firstLoadDone, loading]);
      await sleep(killAfterMs);
      await first.kill();
      const decidedAtKill = (await probe.partitions(source.namespace))[0]?.frontier ?? 0;
      startWorker(options);
      const ends = await loading;
      expect(ends.get(0), what).toBe(history.length);
      const rows = await probe.waitForFrontiers(source.namespace, ends, 60_000);
      console.log(
        `worker-kill: ${what}: ${decidedAtKill} of ${history.length} decided at the kill, ${first.messages('process_attempt').length} attempts logged, done after ${Date.now() - started} ms`,
      );
      await expectOneDecisionPerOffset(source.namespace, rows);
      await expectExportEqualsSimulate(source, scratchFile(`${source.topic}.all.jsonl`, linesText(history)));
      await stopAllWorkers();
    }
  });
});
