/**
 * The full benchmark run (docs/design.md#benchmarks; `npm run bench` without --scale), as a
 * list of phases, each on its own namespace:
 *
 *   pg_test_fsync → backlog (2 partitions) → 2 workers at batch 1 (a bounded window) and at
 *   each batch size → verify of the largest drained namespace (right after the drain, when a
 *   user runs it) → the Kafka Streams peer with 2 stream threads → the baselines (naive,
 *   evidence floor, Connect-style sink) → the live chain at the best batch size: latency →
 *   SIGKILL + restart, SIGKILL + takeover
 *
 * and the result they make, with its targets judged.
 */
import os from 'node:os';
import { join } from 'node:path';
import type { Manifest } from '../domain/config.js';
import { ledgerBacklog } from '../domain/ledger-traffic.js';
import { listedStockKeys } from '../domain/stock-key-terms.js';
import { defaultBatchSize } from '../machines/limits.js';
import { profileAttempts } from './attempt-log-profile.js';
import { type BaselineResult, measureBaseline } from './baseline-throughput.js';
import { type BenchContext, repoRoot } from './bench-context.js';
import type { BenchOptions } from './bench-options.js';
import { type BenchResult, judgeTargets } from './bench-report.js';
import { BulkProducer } from './bulk-producer.js';
import { measureCommitFloor } from './commit-floor.js';
import { probeFsync } from './fsync-probe.js';
import { profileHops } from './hop-profile.js';
import { measureRecovery } from './kill-recovery.js';
import { type KstreamsResult, measureKstreams } from './kstreams-throughput.js';
import { startLiveChain } from './live-chain.js';
import { measureObservation } from './observation-probe.js';
import { type LatencyResult, measureLatency } from './publish-view-latency.js';
import { describeMachine, describeVersions } from './run-environment.js';
import { measureVerify } from './verify-measure.js';
import { measureWorkers, type ThroughputResult } from './worker-throughput.js';

/** The baselines' poll size (baseline-consumer.ts polls this many). */
const naivePollSize = 500;
/** As many stream threads as amends has workers. */
const kstreamsThreads = 2;

interface Backlog {
  /** Each partition's end offset once the backlog is published. */
  ends: Map<number, number>;
  publishS: number;
}

export async function fullRun(ctx: BenchContext, options: BenchOptions, startedAt: string): Promise<BenchResult> {
  const say = (line: string) => ctx.progress(line);
  say(`bench ${options.runId}: ${options.records.toLocaleString('en')} records; logs in ${ctx.runDir}`);
  const machine = describeMachine();
  say('pg_test_fsync …');
  const fsync = probeFsync(join(repoRoot, '.stack'), options.fsyncSecondsPerTest);
  say(`  fdatasync: ${fsync.fdatasync_ops_per_s ?? 'n/a'} ops/s`);
  const versions = await describeVersions(ctx.pool);
  say('backlog: creating the source topic and publishing …');
  const source = ctx.createSource('src').manifest;
  const backlog = await publishBacklog(ctx, source, options.records);
  const throughput = await measureThroughput(ctx, source, backlog.ends, options);
  const verify = verifyLargestDrained(ctx, throughput.runs);
  ctx.progress(`Kafka Streams peer: exactly_once_v2, ${kstreamsThreads} stream threads …`);
  const kstreams = await measureKstreams(ctx, source, backlog.ends, kstreamsThreads);
  const baselines = await measureBaselines(ctx, source.source_topic, options.records);
  const live = await measureLiveChain(ctx, throughput.best.batch_size, options);
  const rss = ctx.workers.map((w) => Math.round(w.peakRssMb() * 10) / 10);
  const { distribution, ...latencySummary } = live.latency;
  machine.load_average_end = os.loadavg().map((l) => Math.round(l * 100) / 100);
  const partial: Omit<BenchResult, 'targets'> = {
    run_id: options.runId,
    started_at: startedAt,
    finished_at: new Date().toISOString(),
    backlog: {
      records: options.records,
      partitions: backlog.ends.size,
      publish_s: backlog.publishS,
      publish_rps: options.records / backlog.publishS,
    },
    throughput: throughputFigures(throughput, baselines, kstreams),
    latency_ms: { ...latencySummary, hops: live.hops, load_average_1m: live.loadDuringLatency },
    latency_high_ms: live.high === null ? null : highSummary(live.high, live.loadDuringHigh),
    recovery_s: live.recovery,
    verify,
    rss_mb_peak: Math.max(...rss),
    rss_mb_per_worker_process: rss,
    machine: { ...machine, pg_test_fsync: fsync },
    versions,
    latency_distribution_ms: distribution,
  };
  return { ...partial, targets: judgeTargets(partial) };
}

/** `records` of generated ledger traffic on the source topic, through one bulk producer. */
async function publishBacklog(ctx: BenchContext, source: Manifest, records: number): Promise<Backlog> {
  const producer = await BulkProducer.open({ brokers: ctx.brokers, topic: source.source_topic, lingerMs: 50 });
  const publishStart = Date.now();
  const backlog = ledgerBacklog(
    { keys: listedStockKeys(source.config), postsPerDay: 400, firstDay: '2026-03-02', seed: 1, txnPrefix: 'T' },
    records,
  );
  for (let i = 0; i < backlog.length; i++) {
    await producer.send(backlog[i] as (typeof backlog)[number], false);
    if ((i + 1) % 50_000 === 0) ctx.progress(`  ${(i + 1).toLocaleString('en')} handed to the producer`);
  }
  await producer.flush(120_000);
  const publishS = (Date.now() - publishStart) / 1000;
  const ends = new Map(producer.ends);
  await producer.close();
  ctx.progress(`  ${producer.deliveredCount.toLocaleString('en')} acknowledged in ${publishS.toFixed(1)} s`);
  return { ends, publishS };
}

/** The higher load's figures without its distribution (the chart draws the first load's). */
function highSummary(result: LatencyResult, loadAverage: number) {
  const { distribution: _, ...summary } = result;
  return { ...summary, load_average_1m: loadAverage };
}

/** Two workers at batch 1 for a bounded window (with what bounds it), then at each batch size. */
async function measureThroughput(
  ctx: BenchContext,
  source: Manifest,
  ends: ReadonlyMap<number, number>,
  options: BenchOptions,
) {
  ctx.progress(`throughput: 2 workers at batch 1 for a window of ${options.batch1WindowS} s …`);
  const batch1 = await measureWorkers(ctx, source, ends, 1, options.batch1WindowS);
  const batch1Logs = ['a', 'b'].map((w) => join(ctx.logsDir, `${ctx.name('b1')}-${w}.log`));
  // What bounds batch size 1: a durable commit per record, and an observation per poll.
  const commitFloor = await measureCommitFloor(
    ctx.pool,
    `amends_bench_floor_${options.runId.replaceAll('-', '_')}`,
    300,
  );
  const observation = await measureObservation(ctx.brokers, source, 100);
  ctx.progress(
    `  durable commit floor ${commitFloor.ms_per_commit.toFixed(2)} ms, source observation p50 ${observation.p50_ms.toFixed(2)} ms`,
  );
  const runs: ThroughputResult[] = [batch1];
  for (const size of options.batchSizes) {
    ctx.progress(`throughput: 2 workers at batch ${size} over the whole backlog …`);
    runs.push(await measureWorkers(ctx, source, ends, size, null));
  }
  const best = runs.filter((r) => r.batch_size !== 1).reduce((a, b) => (b.rps > a.rps ? b : a), batch1);
  return { batch1, batch1Logs, commitFloor, observation, runs, best };
}

type Throughput = Awaited<ReturnType<typeof measureThroughput>>;

/** The verifier on the largest drained namespace: the last run over the whole backlog. */
function verifyLargestDrained(ctx: BenchContext, runs: readonly ThroughputResult[]) {
  const drained = runs.filter((r) => r.bounded_window_s === null).at(-1);
  ctx.progress('verify: amendsctl verify --json of the largest drained namespace …');
  const verify = drained ? measureVerify(ctx, drained.manifest_path, `batch ${drained.batch_size}`) : null;
  if (verify)
    ctx.progress(
      `  ${verify.verdict}: ${verify.records_per_s.toLocaleString('en')} records/s, peak RSS ${verify.peak_rss_mb} MB`,
    );
  return verify;
}

async function measureBaselines(ctx: BenchContext, topic: string, records: number) {
  ctx.progress(`naive baseline: 2 consumers, poll ${naivePollSize}, auto-commit …`);
  const naive = await measureBaseline(ctx, 'naive', topic, records);
  ctx.progress(`evidence floor: 2 consumers, poll ${naivePollSize}, minimum evidence per poll …`);
  const floor = await measureBaseline(ctx, 'floor', topic, records);
  ctx.progress(`Connect-style sink: 2 consumers, poll ${naivePollSize}, upsert per poll …`);
  const connect = await measureBaseline(ctx, 'connect', topic, records);
  return { naive, floor, connect };
}

/** The live chain (2 workers, relay, view) at `batchSize`: latency at the offered load, then the kills. */
async function measureLiveChain(ctx: BenchContext, batchSize: number, options: BenchOptions) {
  ctx.progress(`latency: live chain at batch ${batchSize} (2 workers, relay, view) …`);
  const chain = await startLiveChain(ctx, batchSize);
  const latency = await measureLatency(ctx, chain, options.latencyRps, options.latencyS, options.warmupS);
  // Read before the kills: the restarted worker appends to the same log.
  const hops = profileHops(
    chain.workers.map((w) => join(ctx.logsDir, `${w.name}.log`)),
    join(ctx.logsDir, `${chain.namespace}-relay.log`),
    join(ctx.logsDir, `${chain.namespace}-view.log`),
  );
  const loadDuringLatency = os.loadavg()[0] ?? Number.NaN;
  const high =
    options.latencyHighRps > 0
      ? await measureLatency(ctx, chain, options.latencyHighRps, options.latencyS, options.warmupS)
      : null;
  const loadDuringHigh = os.loadavg()[0] ?? Number.NaN;
  ctx.progress('recovery: SIGKILL under load …');
  const recovery = await measureRecovery(ctx, chain, options.latencyRps, options.steadyS);
  await ctx.stopAll();
  await chain.producer.close();
  return { latency, hops, loadDuringLatency, high, loadDuringHigh, recovery };
}

/** The default batch size's run as a multiple of `otherRps` (null when the sweep left it out). */
function defaultRatio(runs: readonly { batch_size: number; rps: number }[], otherRps: number): number | null {
  const run = runs.find((r) => r.batch_size === defaultBatchSize);
  return run === undefined ? null : run.rps / otherRps;
}

function throughputFigures(
  t: Throughput,
  baselines: Record<'naive' | 'floor' | 'connect', BaselineResult>,
  kstreams: KstreamsResult,
): BenchResult['throughput'] {
  const { batch1, best } = t;
  const { naive, floor, connect } = baselines;
  return {
    batch1_rps: batch1.rps,
    batch1_rps_per_worker: batch1.rps_per_worker,
    batch1_window_s: batch1.bounded_window_s,
    batch1_profile: profileAttempts(t.batch1Logs),
    batch1_bounds: { durable_commit_floor: t.commitFloor, source_observation: t.observation },
    best: { batch_size: best.batch_size, rps: best.rps, rps_per_worker: best.rps_per_worker },
    default_batch_size: defaultBatchSize,
    ratio_default_to_best: defaultRatio(t.runs, best.rps),
    naive_rps: naive.rps,
    ratio_best_to_naive: best.rps / naive.rps,
    floor_rps: floor.rps,
    ratio_best_to_floor: best.rps / floor.rps,
    connect_rps: connect.rps,
    ratio_best_to_connect: best.rps / connect.rps,
    kstreams_rps: kstreams.rps,
    ratio_best_to_kstreams: best.rps / kstreams.rps,
    ratio_default_to_kstreams: defaultRatio(t.runs, kstreams.rps),
    kstreams,
    runs: t.runs,
    naive: { ...naive, poll_size: naivePollSize, processes: 2 },
    floor: { ...floor, poll_size: naivePollSize, processes: 2 },
    connect: { ...connect, poll_size: naivePollSize, processes: 2 },
  };
}
