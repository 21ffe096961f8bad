/**
 * `amends worker` end to end (quality.md §1 item 4): real worker processes, the real broker
 * and PostgreSQL, the fixtures loaded by the real source-load, and what the workers
 * committed (`export`) compared byte for byte with what `simulate` derives offline.
 *
 * Each test makes its own amends-test-* topic and namespace (topics deleted in afterAll;
 * namespaces are rows that stay). Every worker started is SIGKILLed in afterEach if a test
 * left it running.
 */

import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RdKafka } from '@confluentinc/kafka-javascript';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl } from '../support/endpoints.js';
import { commitGroupOffset, eventually } from '../support/kafka-source-fixtures.js';
import { deleteTestTopics, describeTestGroup, endOffsets } from '../support/kafka-test-tools.js';
import { expectFailureLine } from '../support/process-log.js';
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
  workerEnv,
} from '../support/worker-process.js';

const topics = new Set<string>();
const probe = new StoreProbe();
const fixture = (name: string) => join(repoRoot, 'fixtures', name);
const twoKeysConfig = fixture('two-keys.config.json');
const stories = ['before.jsonl', 'second-key.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'];

/** The stories concatenated in load order: simulate's input. */
function storiesFile(name: string): string {
  return scratchFile(name, stories.map((s) => readFileSync(fixture(s), 'utf8')).join(''));
}

/** The fields of worker.md §7 on every process_attempt line. */
function expectProcessAttemptFields(worker: WorkerProcess, namespace: string): void {
  const attempts = worker.messages('process_attempt');
  for (const line of attempts) {
    expect(line).toMatchObject({
      msg: 'process_attempt',
      // Routine (acknowledged) attempts are debug lines; the suites run at debug (workerEnv).
      level: line.observation === 'acknowledged' ? 'debug' : expect.stringMatching(/^(info|warn)$/),
      role: 'worker',
      namespace,
      partition: expect.any(Number),
      first_offset: expect.any(Number),
      last_offset: expect.any(Number),
      records: expect.any(Number),
      epoch: expect.any(Number),
      storage_call_elapsed_ns: expect.any(Number),
      observation: expect.stringMatching(/^(acknowledged|unknown|fenced|error)$/),
      time: expect.any(String),
    });
    expect(line.records).toBe((line.last_offset as number) - (line.first_offset as number) + 1);
    expect(line.storage_call_elapsed_ns as number).toBeGreaterThan(0);
  }
}

/** Each partition's decisions are exactly the offsets 0..frontier-1, once each. */
async function expectOneDecisionPerOffset(namespace: string, rows: PartitionRow[]): Promise<void> {
  for (const row of rows) {
    const offsets = await probe.decisionOffsets(namespace, row.partition);
    expect(offsets).toEqual(Array.from({ length: row.frontier }, (_, i) => i));
  }
}

/** A dynamic member's worker id (worker.ts: hostname-pid), which claims record as owner. */
function dynamicId(worker: WorkerProcess): string {
  return `${hostname()}-${worker.pid}`;
}

/** The lines of `files` concatenated (optionally only lines [from, to) of one file). */
function linesOf(file: string, from = 0, to?: number): string {
  const lines = readFileSync(fixture(file), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  return lines
    .slice(from, to)
    .map((l) => `${l}\n`)
    .join('');
}

/** Loads `text` (fixture lines) as one file; appends it to the run's simulate input. */
async function loadText(source: TestSource, input: string[], name: string, text: string) {
  input.push(text);
  return loadFile(source, scratchFile(`${source.topic}.${name}.jsonl`, text));
}

async function groupState(groupId: string): Promise<string> {
  return (await describeTestGroup(groupId))?.state ?? 'Unknown';
}

/**
 * A plain member of the workers' group (classic protocol, eager range, like the worker's
 * consumer: worker.md §3) that records when the broker assigns it partitions.
 */
class GroupMember {
  assignedAt: number | undefined;
  assigned: number[] = [];
  private closed = false;
  private subscribed = false;

  private constructor(private readonly consumer: RdKafka.KafkaConsumer) {}

  static async connect(groupId: string): Promise<GroupMember> {
    let member: GroupMember | undefined;
    const consumer = new RdKafka.KafkaConsumer(
      {
        'bootstrap.servers': testBrokers,
        'group.id': groupId,
        'group.protocol': 'classic',
        'partition.assignment.strategy': 'range',
        'enable.auto.commit': false,
        'session.timeout.ms': 6000,
        rebalance_cb(this: RdKafka.KafkaConsumer, error: RdKafka.LibrdKafkaError, assignment: RdKafka.Assignment[]) {
          if (error.code === RdKafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
            if (member) {
              member.assignedAt = Date.now();
              member.assigned = assignment.map((a) => a.partition);
            }
            this.assign(assignment);
          } else {
            this.unassign();
          }
        },
      },
      { 'auto.offset.reset': 'earliest' },
    );
    await new Promise<void>((resolve, reject) =>
      consumer.connect({ timeout: 10_000 }, (error) => (error ? reject(error) : resolve())),
    );
    member = new GroupMember(consumer);
    return member;
  }

  /** Joins the group: the broker starts a rebalance. Polls to serve the callbacks. */
  subscribe(topic: string): void {
    this.subscribed = true;
    this.consumer.subscribe([topic]);
    this.consumer.consume();
  }

  /** Leaves the group (the broker rebalances) and disconnects, within 10 s. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.subscribed) this.consumer.unsubscribe();
    await Promise.race([
      new Promise<void>((resolve) => this.consumer.disconnect(() => resolve())),
      sleep(10_000, undefined, { ref: false }),
    ]);
  }
}

beforeAll(() => requireBuild());
afterEach(() => stopAllWorkers());
afterAll(async () => {
  await stopAllWorkers();
  await probe.close();
  await deleteTestTopics(topics);
});

describe('amends worker: two workers, two keys', () => {
  it.each([1, 500])('decides exactly what simulate derives, at --batch-size %i', async (batchSize) => {
    const source = await createSource(topics, twoKeysConfig);
    const a = startWorker({ manifestPath: source.manifestPath, instanceId: 'worker-a', batchSize });
    const b = startWorker({ manifestPath: source.manifestPath, instanceId: 'worker-b', batchSize });
    // Both got business: once the group has settled each owns one partition, and each then
    // decides that partition's records.
    const split = await probe.waitFor('one partition each', source.namespace, (rows) => {
      const owners = rows.map((r) => r.owner);
      return rows.length === 2 && owners.includes('worker-a') && owners.includes('worker-b');
    });
    let ends = new Map<number, number>();
    for (const story of stories) ends = mergeEnds(ends, await loadFile(source, fixture(story)));
    expect([...ends].sort()).toEqual([
      [0, 10],
      [1, 7],
    ]);
    // The broker's own ends agree (plain, non-transactional loads: end = last offset + 1).
    expect(await endOffsets(source.topic, 2)).toEqual([10, 7]);
    const rows = await probe.waitForFrontiers(source.namespace, ends);
    await expectExportEqualsSimulate(source, storiesFile(`${source.topic}.stories.jsonl`));
    await expectOneDecisionPerOffset(source.namespace, rows);

    expect(rows.map((r) => [r.epoch, r.owner])).toEqual(split.map((r) => [r.epoch, r.owner]));
    for (const w of [a, b]) {
      const mine = split.find((r) => r.owner === w.options.instanceId)?.partition;
      expect(w.messages('process_attempt').length).toBeGreaterThan(0);
      expect(w.messages('process_attempt').every((l) => l.partition === mine)).toBe(true);
      expectProcessAttemptFields(w, source.namespace);
      if (batchSize === 1) expect(w.messages('process_attempt').every((l) => l.records === 1)).toBe(true);
    }
    const [exitA, exitB] = await Promise.all([a.stop(), b.stop()]);
    expect(exitA.code).toBe(0);
    expect(exitB.code).toBe(0);
  });
});

describe('amends worker: offsets and ownership', () => {
  it('resumes from the PostgreSQL frontier (1), not from a group offset of 5', async () => {
    const source = await createSource(topics);
    const input: string[] = [];
    // A dynamic member leaves the group on SIGTERM, so the group is empty and takes a
    // plain offset commit (a group with members refuses commits from outside it).
    const first = startWorker({ manifestPath: source.manifestPath });
    await loadText(source, input, 'first', linesOf('before.jsonl', 0, 1));
    await probe.waitForFrontiers(source.namespace, new Map([[0, 1]]));
    expect((await first.stop()).code).toBe(0);

    const ends = await loadText(source, input, 'rest', linesOf('before.jsonl', 1) + linesOf('correction.jsonl'));
    expect(ends.get(0)).toBe(8);
    await commitGroupOffset(source.groupId, source.topic, 0, 5);
    const second = startWorker({ manifestPath: source.manifestPath });
    const rows = await probe.waitForFrontiers(source.namespace, ends);
    expect(second.messages('process_attempt')[0]).toMatchObject({ partition: 0, first_offset: 1 });
    await expectOneDecisionPerOffset(source.namespace, rows);
    await expectExportEqualsSimulate(source, scratchFile(`${source.topic}.all.jsonl`, input.join('')));
    expect((await second.stop()).code).toBe(0);
  });

  it('splits the partitions when a second worker joins and hands them over on SIGTERM', async () => {
    const source = await createSource(topics, twoKeysConfig);
    const input: string[] = [];
    const a = startWorker({ manifestPath: source.manifestPath });
    let ends = mergeEnds(
      await loadText(source, input, 'a-only-0', linesOf('before.jsonl')),
      await loadText(source, input, 'a-only-1', linesOf('second-key.jsonl', 0, 3)),
    );
    const alone = await probe.waitForFrontiers(source.namespace, ends);
    expect(alone.map((r) => r.owner)).toEqual([dynamicId(a), dynamicId(a)]);

    // B joins: an eager rebalance revokes both and gives one partition to each; every
    // claim installs a new epoch.
    const b = startWorker({ manifestPath: source.manifestPath });
    const split = await probe.waitFor('one partition each', source.namespace, (rows) =>
      rows.every((r, i) => r.epoch > (alone[i] as PartitionRow).epoch && r.owner !== null),
    );
    expect(new Set(split.map((r) => r.owner))).toEqual(new Set([dynamicId(a), dynamicId(b)]));
    const attemptsBefore = { a: a.messages('process_attempt').length, b: b.messages('process_attempt').length };
    ends = mergeEnds(
      ends,
      await loadText(source, input, 'split-1', linesOf('second-key.jsonl', 3)),
      await loadText(source, input, 'split-0', linesOf('correction.jsonl')),
    );
    await probe.waitForFrontiers(source.namespace, ends);
    // Both kept working after the split, each on its own partition.
    for (const [w, before] of [
      [a, attemptsBefore.a],
      [b, attemptsBefore.b],
    ] as const) {
      const mine = split.find((r) => r.owner === dynamicId(w))?.partition;
      const after = w.messages('process_attempt').slice(before);
      expect(after.length).toBeGreaterThan(0);
      expect(after.every((l) => l.partition === mine && l.observation === 'acknowledged')).toBe(true);
    }

    // A stops cleanly; B takes A's partition over with a new epoch.
    const stopped = await a.stop('SIGTERM');
    expect(stopped.code).toBe(0);
    const aPartition = split.find((r) => r.owner === dynamicId(a))?.partition as number;
    await probe.waitFor('B owns both', source.namespace, (rows) => rows.every((r) => r.owner === dynamicId(b)));
    ends = mergeEnds(ends, await loadText(source, input, 'b-only-0', linesOf('cancel-last-day.jsonl')));
    const rows = await probe.waitForFrontiers(source.namespace, ends);
    expect((rows[aPartition] as PartitionRow).epoch).toBeGreaterThan((split[aPartition] as PartitionRow).epoch);
    await expectOneDecisionPerOffset(source.namespace, rows);
    await expectExportEqualsSimulate(source, scratchFile(`${source.topic}.all.jsonl`, input.join('')));
    expect((await b.stop()).code).toBe(0);
  });

  it('a broker-observed rebalance waits for the in-flight decision', async () => {
    const source = await createSource(topics, twoKeysConfig);
    const input: string[] = [];
    const a = startWorker({ manifestPath: source.manifestPath });
    let ends = mergeEnds(
      await loadText(source, input, 'first-0', linesOf('before.jsonl', 0, 2)),
      await loadText(source, input, 'first-1', linesOf('second-key.jsonl', 0, 2)),
    );
    const settled = await probe.waitForFrontiers(source.namespace, ends);
    // The second member is a plain consumer of the group, connected ahead: its JoinGroup
    // then reaches the broker within milliseconds of subscribe(), so the whole row-lock hold
    // stays well below lock_timeout (5 s) however slow a second worker process would start.
    const member = await GroupMember.connect(source.groupId);

    // Hold partition 0's row lock, so A's next decision blocks inside its store call.
    const holder = new pg.Client({ connectionString: testDatabaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM partitions WHERE namespace = $1 AND partition = 0 FOR UPDATE', [
        source.namespace,
      ]);
      ends = mergeEnds(ends, await loadText(source, input, 'blocked-0', linesOf('before.jsonl', 2, 3)));
      const holderPid = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      await eventually('A waits for the row lock', async () => {
        const { rows } = await probe.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid)) AND application_name = $2`,
          [holderPid, `amends worker ${dynamicId(a)}`],
        );
        return rows.length > 0;
      });
      const blockedSince = Date.now();

      // The member joins: the broker starts a rebalance that cannot complete while A's
      // decision is in flight (the revocation waits for it; worker.md §4).
      member.subscribe(source.topic);
      await eventually('the broker sees a rebalance', async () =>
        ['PreparingRebalance', 'CompletingRebalance'].includes(await groupState(source.groupId)),
      );
      await sleep(1000);
      expect(await groupState(source.groupId)).toBe('PreparingRebalance');
      expect(member.assignedAt).toBeUndefined();
      const during = await probe.partitions(source.namespace);
      expect(during.map((r) => [r.epoch, r.frontier, r.owner])).toEqual(
        settled.map((r) => [r.epoch, r.frontier, r.owner]),
      );
      // Released below lock_timeout, so A's first attempt is still the one in flight.
      expect(Date.now() - blockedSince).toBeLessThan(4000);
      await holder.query('ROLLBACK');

      // A's decision commits under its old epoch; only then does the rebalance finish and
      // the member get its partition, and A claims what it keeps afresh.
      const attempt = await a.waitForLog(
        'A decides the blocked record',
        (l) => l.msg === 'process_attempt' && l.partition === 0 && l.first_offset === 2,
      );
      expect(attempt).toMatchObject({
        observation: 'acknowledged',
        epoch: (settled[0] as PartitionRow).epoch,
      });
      await eventually('the member is assigned', async () => member.assignedAt !== undefined);
      expect(member.assignedAt as number).toBeGreaterThanOrEqual(Date.parse(attempt.time as string));
      expect(member.assigned).toHaveLength(1);
      const kept = 1 - (member.assigned[0] as number);
      await probe.waitFor(
        'A claims the partition it keeps',
        source.namespace,
        (rows) => (rows[kept] as PartitionRow).epoch > (settled[kept] as PartitionRow).epoch,
      );

      // The member leaves; A gets both back and decides the rest exactly once.
      await member.close();
      ends = mergeEnds(ends, await loadText(source, input, 'rest-0', linesOf('before.jsonl', 3)));
      const rows = await probe.waitForFrontiers(source.namespace, ends);
      expect(rows.map((r) => r.owner)).toEqual([dynamicId(a), dynamicId(a)]);
      await expectOneDecisionPerOffset(source.namespace, rows);
      await expectExportEqualsSimulate(source, scratchFile(`${source.topic}.all.jsonl`, input.join('')));
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end();
      await member.close();
    }
  });
});

describe('amends worker: signals and diagnostics', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s: exit 0 within seconds, last heartbeat "stopped"', async (signal) => {
    const source = await createSource(topics);
    const w = startWorker({ manifestPath: source.manifestPath, instanceId: `signal-${signal}` });
    const ends = await loadFile(source, fixture('before.jsonl'));
    await probe.waitForFrontiers(source.namespace, ends);
    // While running, each partition actor's heartbeat carries its store operation and the time
    // left of its budget, null between operations (the dashboard's view of another process).
    const deadline = Date.now() + 5_000;
    let running: unknown;
    while (running === undefined && Date.now() < deadline) {
      const beat = (await probe.heartbeats(source.namespace)).find((h) => h.workerId === `signal-${signal}`);
      const parts = (beat?.state as { partitions?: Record<string, unknown>[] } | undefined)?.partitions ?? [];
      // A beat up to a second old may still say claiming: wait for one that says processing.
      const processing = (p: Record<string, unknown>) => String(p.state).startsWith('processing');
      running = parts.find((p) => p.partition === 0 && processing(p) && 'operation' in p && 'deadline_in_ms' in p);
      if (running === undefined) await sleep(200);
    }
    expect(running, 'a heartbeat of partition 0 processing, within 5 s').toMatchObject({
      partition: 0,
      state: expect.stringMatching(/^processing/),
    });
    const exit = await w.stop(signal);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(5000);
    expect(w.messages('signal')).toMatchObject([{ signal }]);
    expect(w.messages('worker_stopped')).toMatchObject([{ exit_code: 0, failure: null }]);
    const beat = (await probe.heartbeats(source.namespace)).find((h) => h.workerId === `signal-${signal}`);
    expect(beat?.state).toMatchObject({ group: 'stopped', partitions: [] });
  });

  it('a missing AMENDS_DATABASE_URL: exit 1, one line', async () => {
    const source = await createSource(topics);
    const { AMENDS_DATABASE_URL: _, ...env } = workerEnv;
    const w = startWorker({ manifestPath: source.manifestPath, env });
    expect((await w.waitForExit()).code).toBe(1);
    expect(w.logs, w.stderr).toHaveLength(1);
    expect(expectFailureLine(w, 'worker')).toMatch(/AMENDS_DATABASE_URL is not set/);
  });

  it('an unreachable broker with --outage-budget-s 0: exit 1, one line, in bounded time', async () => {
    const source = await createSource(topics);
    const started = Date.now();
    // Budget 0: no waiting out the outage first (diagnostics.test.ts covers the ride at start).
    const w = startWorker({
      manifestPath: source.manifestPath,
      env: { ...workerEnv, AMENDS_BROKERS: '127.0.0.1:1' },
      extraArgs: ['--outage-budget-s', '0'],
    });
    const exit = await w.waitForExit(30_000);
    expect(exit.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(expectFailureLine(w, 'worker')).toMatch(/127\.0\.0\.1:1/);
    expect(w.stderr).not.toMatch(/^\s+at /m);
  });

  it('an unknown flag: exit 2', async () => {
    const source = await createSource(topics);
    const w = startWorker({ manifestPath: source.manifestPath, extraArgs: ['--bogus'] });
    expect((await w.waitForExit()).code).toBe(2);
    // Not at a terminal: the usage error is the log's one line, not the help text.
    expect(w.logs, w.stderr).toHaveLength(1);
    expect(expectFailureLine(w, 'worker', 2)).toBe('amends worker: unknown flag --bogus');
  });
});
