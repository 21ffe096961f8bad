/**
 * The store's failure paths through a real `amends worker` process (worker.md §5–§7): a
 * COMMIT whose reply is lost on the wire, a claim blocked on a real row lock when SIGTERM
 * arrives, and a store that rejects every commit. The store-level versions of these cases
 * are in postgres-state.test.ts; here the whole process must log, resolve and exit right.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { storeStatementNames } from '../../src/io/store/sql/statement-names.js';
import {
  bindStatementName,
  type FaultAction,
  type FrontendMessage,
  PgFaultProxy,
} from '../../src/showcase/pg-fault-proxy.js';
import { requireBuild } from '../support/amendsctl-process.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import { TestProducer } from '../support/kafka-source-fixtures.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import {
  attempts,
  diagnostics,
  expectExportEqualsSimulateOf,
  expectFailedExit,
  type PlacedRecord,
  placed,
  post,
  stockKey,
  waitUntil,
} from '../support/worker-fault-harness.js';
import {
  createSource,
  StoreProbe,
  startWorker,
  stopAllWorkers,
  type TestSource,
  workerEnv,
} from '../support/worker-process.js';

const topics = new Set<string>();
const probe = new StoreProbe();
let producer: TestProducer;

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

/** widget@berlin records on partition 0 (a correction and a duplicate among them), at their real offsets. */
async function publishStory(source: TestSource, count = 6): Promise<PlacedRecord[]> {
  const values = [
    post('T1', 1, '2026-03-02', -30),
    post('T2', 1, '2026-03-03', -25),
    post('T3', 1, '2026-03-04', 10),
    post('T2', 2, '2026-03-03', -15),
    post('T2', 1, '2026-03-03', -25),
    post('T4', 1, '2026-03-05', 7),
  ].slice(0, count);
  const records = values.map((value) => ({ partition: 0, key: stockKey(), value }));
  return placed(records, await producer.send(source.topic, records));
}

async function decided(source: TestSource): Promise<number[][]> {
  return [await probe.decisionOffsets(source.namespace, 0), await probe.decisionOffsets(source.namespace, 1)];
}

const commitBatchBind = (m: FrontendMessage) => bindStatementName(m) === storeStatementNames.commitBatch;

describe('amends worker: a batch COMMIT whose reply is lost on the wire (TCP proxy)', () => {
  async function runWithLostCommit(action: FaultAction) {
    const source = await createSource(topics);
    const records = await publishStory(source);
    const { proxy, url } = await PgFaultProxy.start(testDatabaseUrl);
    try {
      // The first batch commit of the process: the proxy acts on its Bind … Sync, once.
      proxy.arm({ when: commitBatchBind, action });
      const worker = startWorker({
        manifestPath: source.manifestPath,
        batchSize: 2,
        env: { ...workerEnv, AMENDS_DATABASE_URL: url },
      });
      await probe.waitForFrontiers(source.namespace, new Map([[0, 6]]), 30_000);
      const exit = await worker.stop('SIGTERM');
      expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
      expect(proxy.fired).toBe(1);
      expect(diagnostics(worker)).toEqual([]);

      const all = attempts(worker);
      const unknown = all.filter((a) => a.observation === 'unknown');
      expect(unknown, worker.tail()).toHaveLength(1);
      expect(all.filter((a) => a.observation !== 'unknown' && a.observation !== 'acknowledged')).toEqual([]);
      const lost = unknown[0] as unknown as { first_offset: number; last_offset: number; epoch: number };
      const next = all[all.indexOf(unknown[0] as (typeof all)[number]) + 1];
      // One decision per offset; export equals simulate over the same records, byte for byte.
      expect(await decided(source)).toEqual([records.map((r) => r.offset), []]);
      expect((await probe.partitions(source.namespace)).find((p) => p.partition === 0)).toMatchObject({
        epoch: lost.epoch,
        frontier: 6,
      });
      await expectExportEqualsSimulateOf(source, records);
      return { lost, next };
    } finally {
      await proxy.close();
    }
  }

  it('the server committed and its reply was dropped: unknown, re-observed as committed, continues without reapplying', async () => {
    const { lost, next } = await runWithLostCommit('drop_reply');
    // frontier = last + 1 was observed: the next attempt starts after the lost batch, never at it again.
    expect(next).toMatchObject({ observation: 'acknowledged', first_offset: lost.last_offset + 1 });
  });

  it('the connection dropped before the commit reached the server: unknown, re-observed as not committed, retried', async () => {
    const { lost, next } = await runWithLostCommit('drop_before_forward');
    expect(next).toMatchObject({
      observation: 'acknowledged',
      first_offset: lost.first_offset,
      last_offset: lost.last_offset,
    });
  });
});

describe('amends worker: the lost commit is still running on the server when the worker re-observes', () => {
  it('the abandoned backend is ended before the observation: resolved as not committed, retried, and the partition goes on', async () => {
    const source = await createSource(topics);
    const { proxy, url } = await PgFaultProxy.start(testDatabaseUrl);
    const instanceId = testName('still-running');
    // The worker's sessions waiting on a lock, each with whether it began before the commit's
    // connection was cut: only the lost commit's can; the retry's session is opened after.
    let cutAtMs = Number.POSITIVE_INFINITY;
    const blockedBackends = async () =>
      (
        await probe.pool.query<{ pid: number; started_ms: number }>(
          `SELECT pid, (extract(epoch FROM backend_start) * 1000)::float8 AS started_ms FROM pg_stat_activity
            WHERE application_name = $1 AND cardinality(pg_blocking_pids(pid)) > 0`,
          [`amends worker ${instanceId}`],
        )
      ).rows.map((r) => ({ pid: r.pid, beforeCut: r.started_ms < cutAtMs }));
    const holder = new pg.Client({ connectionString: testDatabaseUrl, application_name: 'amends-test row holder' });
    await holder.connect();
    try {
      const worker = startWorker({
        manifestPath: source.manifestPath,
        instanceId,
        env: { ...workerEnv, AMENDS_DATABASE_URL: url },
      });
      await probe.waitFor('both partitions claimed', source.namespace, (rows) => rows.length === 2, 30_000);
      // The batch commit will wait on this row lock; the server does not notice its client is gone meanwhile.
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM partitions WHERE namespace = $1 AND partition = 0 FOR UPDATE', [
        source.namespace,
      ]);
      // The commit is sent and its connection dropped; the store's best-effort cancel is lost too.
      proxy.arm({
        when: commitBatchBind,
        action: 'drop_after_forward',
        onFire: () => {
          cutAtMs = Date.now();
        },
      });
      proxy.arm({ when: (m) => m.type === 'P' && m.body.includes('pg_cancel_backend'), action: 'drop_before_forward' });
      await producer.send(source.topic, [{ partition: 0, key: stockKey(), value: post('T1', 1, '2026-03-02', 1) }]);
      // Polling may miss the lost commit's wait (the worker ends its backend within
      // milliseconds), so the retry is told apart by when its session began, not by which
      // pid was seen first.
      const blocked = await waitUntil(
        'the retry to wait on the row lock',
        blockedBackends,
        (b) => b.some((s) => !s.beforeCut),
        10_000,
      ).catch(async (error: Error) => {
        const sessions = await probe.pool.query(
          `SELECT pid, backend_start, state, wait_event_type, wait_event, left(query, 80) AS query,
                  pg_blocking_pids(pid) AS blocked_by
             FROM pg_stat_activity WHERE application_name = $1`,
          [`amends worker ${instanceId}`],
        );
        throw new Error(`${error.message}\nsessions: ${JSON.stringify(sessions.rows)}\nstderr:\n${worker.tail()}`);
      });
      expect(proxy.fired).toBe(2);
      // By the time the retry waits, the lost commit's backend is gone.
      expect(blocked.filter((b) => b.beforeCut)).toEqual([]);
      await holder.query('ROLLBACK');

      await probe.waitForFrontiers(source.namespace, new Map([[0, 1]]), 15_000);
      const [next] = await producer.send(source.topic, [
        { partition: 0, key: stockKey(), value: post('T2', 1, '2026-03-02', 2) },
      ]);
      await probe.waitForFrontiers(source.namespace, new Map([[0, (next ?? 0) + 1]]), 15_000);
      const exit = await worker.stop('SIGTERM');
      expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
      expect(attempts(worker).map((a) => [a.first_offset, a.observation])).toEqual([
        [0, 'unknown'],
        [0, 'acknowledged'],
        [1, 'acknowledged'],
      ]);
      expect(await decided(source)).toEqual([[0, 1], []]);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end();
      await proxy.close();
    }
  });
});

describe('amends worker: SIGTERM while a real SQL claim is blocked on the row lock', () => {
  it('exits 0 within seconds, its blocked backend is gone with no open transaction, and the epoch is unchanged', async () => {
    const source = await createSource(topics);
    // A first run creates both partition rows (epoch 1), as an earlier process would have.
    const first = startWorker({ manifestPath: source.manifestPath });
    await probe.waitFor('both partitions claimed', source.namespace, (rows) => rows.length === 2, 15_000);
    expect((await first.stop('SIGTERM')).code).toBe(0);
    const before = await probe.partitions(source.namespace);
    expect(before.map((r) => r.epoch)).toEqual([1, 1]);

    const instanceId = testName('claim-blocked');
    const applicationName = `amends worker ${instanceId}`;
    const holder = new pg.Client({ connectionString: testDatabaseUrl, application_name: 'amends-test row holder' });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT partition FROM partitions WHERE namespace = $1 FOR UPDATE', [source.namespace]);
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;

      const worker = startWorker({ manifestPath: source.manifestPath, instanceId });
      // The worker's store session waits on our row lock (the claim's upsert).
      const blocked = await waitUntil(
        'the worker claim to wait on the row lock',
        async () =>
          (
            await probe.pool.query<{ pid: number; blockers: number[]; query: string }>(
              `SELECT pid, pg_blocking_pids(pid) AS blockers, query FROM pg_stat_activity
                WHERE application_name = $1 AND cardinality(pg_blocking_pids(pid)) > 0`,
              [applicationName],
            )
          ).rows,
        (rows) => rows.length > 0,
        15_000,
      );
      expect(blocked).toHaveLength(1);
      expect(blocked[0]?.blockers).toEqual([holderPid]);
      expect(blocked[0]?.query).toMatch(/INSERT INTO partitions/);
      const blockedPid = blocked[0]?.pid;

      // A full suite once saw worker_stopped logged at once and the process still alive 10 s
      // later: on failure, say what its sessions were doing at the end.
      const sessions = () =>
        probe.pool.query(
          'SELECT pid, state, wait_event_type, wait_event, left(query, 80) AS query FROM pg_stat_activity WHERE application_name = $1',
          [applicationName],
        );
      const watch = setTimeout(() => {
        sessions().then(
          (r) => console.error(`claim-blocked worker still alive after 8 s; its sessions: ${JSON.stringify(r.rows)}`),
          () => {},
        );
      }, 8_000);
      const exit = await worker.stop('SIGTERM', 10_000).finally(() => clearTimeout(watch));
      expect({ code: exit.code, signal: exit.signal }, worker.tail()).toEqual({ code: 0, signal: null });
      expect(exit.ms).toBeLessThan(5_000);
      expect(diagnostics(worker)).toEqual([]);
      // Nothing of the worker stays in the server: not the blocked backend, no session, no transaction.
      await waitUntil(
        'the worker sessions to end',
        async () =>
          (
            await probe.pool.query<{ pid: number; xact_start: Date | null }>(
              'SELECT pid, xact_start FROM pg_stat_activity WHERE application_name = $1 OR pid = $2',
              [applicationName, blockedPid],
            )
          ).rows,
        (rows) => rows.length === 0,
        5_000,
      );
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end();
    }
    // The cancelled claim installed nothing, also after the lock is gone.
    expect(await probe.partitions(source.namespace)).toEqual(before);
  });
});

/** Refuses every decision of this namespace (the table is shared with concurrent suites) while `body` runs. */
async function rejectingDecisions(namespace: string, body: () => Promise<void>): Promise<void> {
  const fn = `amends_test_reject_${Math.random().toString(36).slice(2, 10)}`;
  await probe.pool.query(`
    CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.ns = (SELECT id FROM namespaces WHERE namespace = '${namespace}') THEN
        RAISE EXCEPTION 'amends-test rejects this commit';
      END IF;
      RETURN NEW;
    END $$`);
  await probe.pool.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON decisions FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
  try {
    await body();
  } finally {
    await probe.pool.query(`DROP TRIGGER ${fn} ON decisions`);
    await probe.pool.query(`DROP FUNCTION ${fn}()`);
  }
}

describe('amends worker: store retries exhausted', () => {
  it('--outage-budget-s 0: the first exhausted retries exit 1 saying so, nothing written', async () => {
    const source = await createSource(topics);
    await publishStory(source, 3);
    await rejectingDecisions(source.namespace, async () => {
      const worker = startWorker({ manifestPath: source.manifestPath, extraArgs: ['--outage-budget-s', '0'] });
      const diagnostic = await expectFailedExit(worker);
      expect(diagnostic).toMatch(/partition 0: retries_exhausted: process failed 3 times \(partition_failed\)$/);
      // Three attempts, each refused by the server (an ERROR: not committed), none unknown.
      const tried = attempts(worker);
      expect(tried.map((a) => [a.first_offset, a.observation])).toEqual([
        [0, 'error'],
        [0, 'error'],
        [0, 'error'],
      ]);
      expect(String(tried[0]?.detail)).toMatch(/amends-test rejects this commit/);
    });
    expect(await decided(source)).toEqual([[], []]);
    expect((await probe.partitions(source.namespace)).map((p) => p.frontier)).toEqual([0, 0]);
  });

  it('a refusal that outlasts ten rides: the worker rides, claims afresh each time, then exits 1 saying so', async () => {
    const source = await createSource(topics);
    await publishStory(source, 3);
    const epochsBefore = 1; // the first claim
    await rejectingDecisions(source.namespace, async () => {
      // Each ride ends once the claims commit, so the budget (far longer than one ride's probe
      // and claims) never runs out: the count of rides without a committed decision ends it.
      const worker = startWorker({ manifestPath: source.manifestPath, extraArgs: ['--outage-budget-s', '5'] });
      const diagnostic = await expectFailedExit(worker);
      expect(diagnostic).toMatch(
        /partition 0: retries_exhausted: process failed 3 times; 10 outages in a row without a committed decision \(partition_failed\)$/,
      );
      // Each ride ends in a fresh claim (a new epoch) and three more refused attempts.
      const tried = attempts(worker);
      expect(tried.length).toBe(30);
      expect(tried.every((a) => a.first_offset === 0 && a.observation === 'error')).toBe(true);
      expect(new Set(tried.map((a) => a.epoch)).size).toBeGreaterThan(epochsBefore);
    });
    expect(await decided(source)).toEqual([[], []]);
    expect((await probe.partitions(source.namespace)).map((p) => p.frontier)).toEqual([0, 0]);
  });
});
