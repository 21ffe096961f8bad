/**
 * The scale run (issue 13, docs/design.md#scale-run): does a worker's cost follow the work
 * or the history? On a fresh source topic of the chosen shape:
 *
 *   backlog (≥ 2,000,000 records, ≥ 1,000,000 distinct transactions) → N workers at one
 *   batch size decide all of it → the rate of its first and last tenth (the workers'
 *   process_attempt lines) → SIGKILL + supervised restart with the whole history behind it
 *
 * Peak RSS is each worker process's VmHWM, read every `sampleMs` while it decides: the
 * figure when `referenceRecords` (200,000, or a tenth of a smaller backlog) are decided
 * stands for a 200,000-record backlog, the figure at the end (restarted worker included)
 * for the whole one.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CommitPoint, type TenthRates, tenthRates } from './backlog-tenths.js';
import type { BenchContext } from './bench-context.js';
import type { ScaleOptions, ScaleShapeName } from './bench-options.js';
import type { BenchProcess } from './bench-process.js';
import { measureReadApi, type ReadApiFigures } from './read-api-measure.js';
import { publishScaleBacklog, type ScaleBacklog } from './scale-backlog.js';
import { measureScaleRestart, type ScaleRestart } from './scale-restart.js';
import { partitionStates } from './store-probe.js';
import { measureVerify, type VerifyFigures } from './verify-measure.js';
import { WorkerLogTail } from './worker-log-tail.js';

export interface ScaleResult {
  /** issue 14: `amendsctl verify` of the scale namespace once its workers have stopped. */
  verify: VerifyFigures;
  /** issue 36: explain and balances on the scale namespace (read-api-measure.ts). */
  read_api: ReadApiFigures;
  shape: ScaleShapeName;
  records: number;
  /** Distinct transactions in the backlog (new posts, rev 1). */
  transactions: number;
  keys: number;
  partitions: number;
  workers: number;
  batch_size: number;
  posts_per_day: number;
  publish_s: number;
  /** Start of the workers → every partition's frontier at the backlog's end (harness clock). */
  decide_s: number;
  rps_first_tenth: number | null;
  rps_last_tenth: number | null;
  ratio_last_to_first: number | null;
  rps_by_tenth: (number | null)[];
  tenths: TenthRates;
  per_partition: {
    partition: number;
    records: number;
    transactions: number;
    rps_first_tenth: number | null;
    rps_last_tenth: number | null;
  }[];
  /** The largest VmHWM of the run's worker processes (the restarted one included). */
  rss_mb_peak: number;
  rss_mb_per_worker: { worker: string; restarted: boolean; mb: number }[];
  rss_reference_records: number;
  /** The largest VmHWM of the workers when `rss_reference_records` were decided. */
  rss_mb_at_reference: number | null;
  /** The largest VmHWM of the workers as each tenth of the backlog was decided. */
  rss_mb_by_tenth: number[];
  restart_to_decision_s: number | null;
  first_commit_after_claim_ms: number | null;
  restart: ScaleRestart;
}

const sampleMs = 250;
const progressEveryMs = 5_000;
const rssReferenceMax = 200_000;
const settleLimitMs = 30_000;
/** The slowest decision rate the run waits for before it gives up (records/s). */
const slowestRps = 2_000;

export async function measureScale(ctx: BenchContext, options: ScaleOptions): Promise<ScaleResult> {
  const suffix = `scale-${options.shape}`;
  ctx.progress(
    `scale (${options.shape}): ${options.records.toLocaleString('en')} records over ${options.keys} keys on ${options.partitions} partitions …`,
  );
  const backlog = await publishScaleBacklog(ctx, options, suffix);
  try {
    ctx.progress(
      `  ${backlog.transactions.toLocaleString('en')} distinct transactions published in ${backlog.publish_s.toFixed(1)} s`,
    );
    ctx.progress(`  ${options.workers} workers at batch ${options.batchSize} decide the backlog …`);
    const workers = Array.from({ length: options.workers }, (_, i) =>
      ctx.start('worker', backlog.manifestPath, `${backlog.namespace}-w${i + 1}`, [
        '--batch-size',
        String(options.batchSize),
      ]),
    );
    const rssReference = Math.min(rssReferenceMax, Math.floor(options.records / 10));
    const drained = await drain(ctx, backlog, workers, rssReference);
    // A small backlog can be decided before the last worker's join has given it partitions:
    // the restart must not meet that rebalance.
    await waitGroupSettled(ctx, backlog.namespace, workers);
    const rates = rateFigures(
      workers.flatMap((w) => acknowledgedCommits(join(ctx.logsDir, `${w.name}.log`))),
      backlog,
    );
    ctx.progress('  restart: SIGKILL the owner of partition 0 and start it again with the same --instance-id');
    const { result: restart, restarted } = await measureScaleRestart(ctx, backlog, workers, options.batchSize);
    const all = [...workers, restarted];
    await Promise.all(all.map((w) => w.stop()));
    ctx.progress('  verify: amendsctl verify --json of the scale namespace …');
    const verify = measureVerify(ctx, backlog.manifestPath, backlog.namespace);
    ctx.progress(
      `  ${verify.verdict}: ${verify.records.toLocaleString('en')} records in ${verify.wall_s.toFixed(1)} s, peak RSS ${verify.peak_rss_mb} MB`,
    );
    ctx.progress('  read API: explain, balances of a key and of the namespace …');
    const readApi = await measureReadApi(ctx, backlog.manifestPath, backlog.manifest);
    const rss = all.map((w) => ({ worker: w.name, restarted: w === restarted, mb: round1(w.peakRssMb()) }));
    return {
      shape: options.shape,
      records: options.records,
      transactions: backlog.transactions,
      keys: options.keys,
      partitions: options.partitions,
      workers: options.workers,
      batch_size: options.batchSize,
      posts_per_day: backlog.posts_per_day,
      publish_s: backlog.publish_s,
      decide_s: drained.seconds,
      verify,
      read_api: readApi,
      ...rates,
      rss_mb_peak: Math.max(...rss.map((r) => r.mb)),
      rss_mb_per_worker: rss,
      rss_reference_records: rssReference,
      rss_mb_at_reference: drained.rssAtReference === null ? null : round1(drained.rssAtReference),
      rss_mb_by_tenth: drained.rssByTenth.map(round1),
      restart_to_decision_s: restart.restart_to_decision_s,
      first_commit_after_claim_ms: restart.first_commit_after_claim_ms,
      restart,
    };
  } finally {
    await backlog.producer.close();
  }
}

type RateFigures = Pick<
  ScaleResult,
  'rps_first_tenth' | 'rps_last_tenth' | 'ratio_last_to_first' | 'rps_by_tenth' | 'tenths' | 'per_partition'
>;

/** The tenths of all workers' commits together, and of each partition's alone. */
function rateFigures(commits: CommitPoint[], backlog: ScaleBacklog): RateFigures {
  const tenths = tenthRates(commits);
  const first = tenths.tenths[0]?.rps ?? null;
  const last = tenths.tenths[tenths.tenths.length - 1]?.rps ?? null;
  return {
    rps_first_tenth: first,
    rps_last_tenth: last,
    ratio_last_to_first: first === null || last === null ? null : last / first,
    rps_by_tenth: tenths.tenths.map((t) => t.rps),
    tenths,
    per_partition: [...backlog.ends.keys()]
      .sort((a, b) => a - b)
      .map((p) => {
        const own = tenthRates(commits.filter((c) => c.partition === p));
        return {
          partition: p,
          records: own.records,
          transactions: backlog.transactionsByPartition.get(p) ?? 0,
          rps_first_tenth: own.tenths[0]?.rps ?? null,
          rps_last_tenth: own.tenths[own.tenths.length - 1]?.rps ?? null,
        };
      }),
  };
}

/** Polls the frontiers until the backlog is decided, reading the workers' VmHWM as it goes. */
async function drain(
  ctx: BenchContext,
  backlog: ScaleBacklog,
  workers: BenchProcess[],
  rssReference: number,
): Promise<{ seconds: number; rssAtReference: number | null; rssByTenth: number[] }> {
  const total = [...backlog.ends.values()].reduce((a, b) => a + b, 0);
  const timeoutMs = 120_000 + (total / slowestRps) * 1000;
  const started = Date.now();
  let rssAtReference: number | null = null;
  const rssByTenth: number[] = [];
  let lastReport = started;
  for (;;) {
    await sleep(sampleMs);
    const states = await partitionStates(ctx.pool, backlog.namespace);
    const decided = [...backlog.ends].reduce((a, [p, end]) => a + Math.min(end, states.get(p)?.frontier ?? 0), 0);
    const rss = Math.max(...workers.map((w) => w.peakRssMb()));
    if (rssAtReference === null && decided >= rssReference) rssAtReference = rss;
    while (rssByTenth.length < 10 && decided >= (total * (rssByTenth.length + 1)) / 10) rssByTenth.push(rss);
    const done = decided >= total;
    if (Date.now() - lastReport >= progressEveryMs || done) {
      lastReport = Date.now();
      const s = (Date.now() - started) / 1000;
      ctx.progress(
        `  ${decided.toLocaleString('en')} / ${total.toLocaleString('en')} decided (${s.toFixed(0)} s), worker VmHWM up to ${rss.toFixed(0)} MB`,
      );
    }
    if (done) return { seconds: (Date.now() - started) / 1000, rssAtReference, rssByTenth };
    const dead = workers.find((w) => !w.running);
    if (dead !== undefined) throw new Error(`worker ${dead.name} exited early (see ${ctx.logsDir}/${dead.name}.log)`);
    if (Date.now() - started > timeoutMs) throw new Error(`scale: not decided within ${timeoutMs / 1000} s`);
  }
}

/** Waits until every worker owns a partition (the partitions rows' owners), at most `settleLimitMs`. */
async function waitGroupSettled(ctx: BenchContext, namespace: string, workers: BenchProcess[]): Promise<void> {
  const deadline = Date.now() + settleLimitMs;
  for (;;) {
    const owners = new Set([...(await partitionStates(ctx.pool, namespace)).values()].map((s) => s.owner));
    if (workers.every((w) => owners.has(w.name))) return;
    if (Date.now() > deadline) {
      ctx.progress(`  not every worker owns a partition after ${settleLimitMs / 1000} s; going on`);
      return;
    }
    await sleep(sampleMs);
  }
}

function acknowledgedCommits(logPath: string): CommitPoint[] {
  const commits: CommitPoint[] = [];
  new WorkerLogTail(logPath).read((entry) => {
    if (entry.msg === 'process_attempt' && entry.observation === 'acknowledged') {
      commits.push({ partition: entry.partition, epoch: entry.epoch, records: entry.records, atMs: entry.atMs });
    }
  });
  return commits;
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
