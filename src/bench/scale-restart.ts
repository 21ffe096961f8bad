/**
 * SIGKILL + supervised restart with the whole history behind it (issue 13), after the scale
 * backlog is drained:
 *
 *   SIGSTOP the owner of partition 0 → publish a tail (one batch per partition, the same
 *   traffic stream) → SIGKILL it → start it again at once with the same --instance-id
 *
 * The stop keeps the victim from deciding the tail itself, so its restart has records to
 * decide the moment it owns its partitions again. From the restarted worker's own log (the
 * same file, read from where it stood at the stop) and the partitions row:
 *
 * - `restart_to_decision_s`: SIGKILL → its first acknowledged commit under a new epoch,
 *   on every partition it owned (the latest of them);
 * - `first_commit_after_claim_ms`: the claim (partitions.claimed_at, the claim statement's
 *   transaction time) → that first acknowledged commit (the log line's time, written when
 *   the store call returned), the latest of its partitions. The worker logs no line of its
 *   own for a claim, so the claim is timed by the row it writes; PostgreSQL runs on this
 *   machine, on the same clock;
 * - the steps between: restart → claim, claim → the seek's observation (`store_observed`),
 *   and the first store call itself (`storage_call_elapsed_ns`: decide + commit, including
 *   loading the keys' state on a fresh claim).
 *
 * A restarted worker that exits or decides nothing within `decisionLimitMs` gives null
 * figures and a `failure` (the bench goes on; the targets are then missed).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TrafficRecord } from '../domain/ledger-traffic.js';
import type { BenchContext } from './bench-context.js';
import type { BenchProcess } from './bench-process.js';
import type { ScaleBacklog } from './scale-backlog.js';
import { partitionStates } from './store-probe.js';
import { type AttemptEntry, WorkerLogTail } from './worker-log-tail.js';

export interface ScaleRestart {
  victim: string;
  partitions: number[];
  /** Distinct transactions of the backlog on those partitions: the history behind the restart. */
  history_transactions: number;
  tail_records: number;
  restart_to_decision_s: number | null;
  first_commit_after_claim_ms: number | null;
  /** SIGKILL → the latest claim of its partitions (startup, group join, source validation, claim). */
  restart_to_claim_s: number | null;
  /** Claim → the seek's observation of the partition row, the latest of its partitions. */
  claim_to_seek_ms: number | null;
  /** The first acknowledged store call per partition (decide + commit), ms. */
  first_store_call_ms: number[];
  first_commit_records: number[];
  /** Set when the restarted worker exited or decided nothing in time. */
  failure: string | null;
}

const sampleMs = 50;
const ownersCheckMs = 500;
const decisionLimitMs = 90_000;
const tailDrainLimitMs = 60_000;

interface PartitionWatch {
  partition: number;
  epoch: number;
  firstCommit: AttemptEntry | null;
  seekObservedAtMs: number | null;
}

export async function measureScaleRestart(
  ctx: BenchContext,
  backlog: ScaleBacklog,
  workers: BenchProcess[],
  batchSize: number,
): Promise<{ result: ScaleRestart; restarted: BenchProcess }> {
  const before = await partitionStates(ctx.pool, backlog.namespace);
  const owner = before.get(0)?.owner;
  const victim = workers.find((w) => w.name === owner);
  if (victim === undefined) throw new Error(`partition 0 is owned by ${owner}, not a worker of this run`);
  const watches: PartitionWatch[] = [...before.values()]
    .filter((s) => s.owner === victim.name)
    .map((s) => ({ partition: s.partition, epoch: s.epoch, firstCommit: null, seekObservedAtMs: null }));
  const partitions = watches.map((w) => w.partition).sort((a, b) => a - b);

  process.kill(victim.pid, 'SIGSTOP');
  const logPath = join(ctx.logsDir, `${victim.name}.log`);
  const log = new WorkerLogTail(logPath, statSync(logPath).size);
  const tailRecords = batchSize * backlog.ends.size;
  await publishTail(backlog, victim, tailRecords);
  ctx.progress(`  ${tailRecords.toLocaleString('en')} more records published; SIGKILL ${victim.name}, restart it`);

  const killedAt = Date.now();
  await victim.crash();
  const restarted = ctx.start('worker', backlog.manifestPath, victim.name, ['--batch-size', String(batchSize)]);
  const failure = await watchFirstCommits(ctx, backlog.namespace, log, watches, restarted, killedAt);
  const figures = restartFigures(watches, await claimTimes(ctx, backlog.namespace), killedAt, failure);
  if (failure === null) await waitTailDecided(ctx, backlog);
  return {
    result: {
      victim: victim.name,
      partitions,
      history_transactions: partitions.reduce((a, p) => a + (backlog.transactionsByPartition.get(p) ?? 0), 0),
      tail_records: tailRecords,
      ...figures,
      failure,
    },
    restarted,
  };
}

/** The tail the restarted worker will decide, published while the victim is stopped. */
async function publishTail(backlog: ScaleBacklog, victim: BenchProcess, records: number): Promise<void> {
  try {
    for (let i = 0; i < records; i++) {
      await backlog.producer.send(backlog.traffic.next().value as TrafficRecord, false);
    }
    await backlog.producer.flush(60_000);
  } catch (error) {
    await victim.crash(); // a stopped process would only wait for the SIGKILL of ctx.close()
    throw error;
  }
}

type RestartFigures = Omit<ScaleRestart, 'victim' | 'partitions' | 'history_transactions' | 'tail_records' | 'failure'>;

/** Each figure is the latest over the victim's partitions; null when one partition lacks it. */
function restartFigures(
  watches: readonly PartitionWatch[],
  claims: ReadonlyMap<number, { epoch: number; atMs: number }>,
  killedAt: number,
  failure: string | null,
): RestartFigures {
  const latest = (values: (number | null)[]) =>
    values.some((v) => v === null) ? null : Math.max(...(values as number[]));
  // The claim that installed the epoch of the first commit; a later claim would have another epoch.
  const claimAt = watches.map((w) => {
    const c = claims.get(w.partition);
    return c !== undefined && w.firstCommit !== null && c.epoch === w.firstCommit.epoch ? c.atMs : null;
  });
  const sinceClaim = (atMs: (w: PartitionWatch) => number | null) =>
    latest(
      watches.map((w, i) => {
        const at = atMs(w);
        const claim = claimAt[i] ?? null;
        return at === null || claim === null ? null : at - claim;
      }),
    );
  const firstCommits = watches.flatMap((w) => (w.firstCommit === null ? [] : [w.firstCommit]));
  return {
    restart_to_decision_s:
      failure === null ? seconds(latest(watches.map((w) => w.firstCommit?.atMs ?? null)), killedAt) : null,
    first_commit_after_claim_ms: sinceClaim((w) => w.firstCommit?.atMs ?? null),
    restart_to_claim_s: seconds(latest(claimAt), killedAt),
    claim_to_seek_ms: sinceClaim((w) => w.seekObservedAtMs),
    first_store_call_ms: firstCommits.map((c) => c.storage_call_elapsed_ns / 1e6),
    first_commit_records: firstCommits.map((c) => c.records),
  };
}

/** Reads the restarted worker's new log lines until each watched partition has a commit under a new epoch. */
async function watchFirstCommits(
  ctx: BenchContext,
  namespace: string,
  log: WorkerLogTail,
  watches: PartitionWatch[],
  restarted: BenchProcess,
  killedAt: number,
): Promise<string | null> {
  let ownersCheckedAt = killedAt;
  for (;;) {
    log.read((entry) => {
      if (entry.msg === 'worker_started') return;
      const w = watches.find((x) => x.partition === entry.partition);
      if (w === undefined || entry.epoch <= w.epoch) return;
      if (entry.msg === 'store_observed') w.seekObservedAtMs ??= entry.atMs;
      else if (entry.observation === 'acknowledged') w.firstCommit ??= entry;
    });
    if (watches.every((w) => w.firstCommit !== null)) return null;
    if (!restarted.running) return `the restarted ${restarted.name} exited before deciding (see ${log.path})`;
    if (Date.now() - ownersCheckedAt >= ownersCheckMs) {
      ownersCheckedAt = Date.now();
      const states = await partitionStates(ctx.pool, namespace);
      const moved = watches.find((w) => {
        const now = states.get(w.partition);
        return now !== undefined && now.epoch > w.epoch && now.owner !== restarted.name;
      });
      if (moved !== undefined) {
        return `partition ${moved.partition} went to ${states.get(moved.partition)?.owner} instead of the restarted ${restarted.name} (a rebalance)`;
      }
    }
    if (Date.now() - killedAt > decisionLimitMs) {
      return `the restarted ${restarted.name} decided nothing within ${decisionLimitMs / 1000} s (see ${log.path})`;
    }
    await sleep(sampleMs);
  }
}

/** Per partition: the epoch and the time of its latest claim (partitions.claimed_at). */
async function claimTimes(ctx: BenchContext, namespace: string): Promise<Map<number, { epoch: number; atMs: number }>> {
  const r = await ctx.pool.query<{ partition: number; epoch: string; claimed_ms: number }>(
    `SELECT partition, epoch, extract(epoch FROM claimed_at)::float8 * 1000 AS claimed_ms
       FROM partitions WHERE namespace = $1`,
    [namespace],
  );
  return new Map(r.rows.map((row) => [row.partition, { epoch: Number(row.epoch), atMs: row.claimed_ms }]));
}

/** Waits until the tail is decided on every partition (the restarted worker's memory then includes it). */
async function waitTailDecided(ctx: BenchContext, backlog: ScaleBacklog): Promise<void> {
  const deadline = Date.now() + tailDrainLimitMs;
  while (Date.now() < deadline) {
    const states = await partitionStates(ctx.pool, backlog.namespace);
    if ([...backlog.producer.ends].every(([p, end]) => (states.get(p)?.frontier ?? 0) >= end)) return;
    await sleep(200);
  }
  ctx.progress(`  the tail was not decided within ${tailDrainLimitMs / 1000} s; going on`);
}

function seconds(atMs: number | null, fromMs: number): number | null {
  return atMs === null ? null : (atMs - fromMs) / 1000;
}
