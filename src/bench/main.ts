/**
 * `npm run bench` (quality.md "Benchmarks", not part of npm test): on the local stack,
 *
 *   pg_test_fsync → backlog (≥ 200,000 records, 2 partitions) → 2 workers at batch 1 (a bounded
 *   window) and at each batch size → the naive baseline → the live chain (2 workers, relay,
 *   view) at a fixed offered load: latency → SIGKILL + restart, SIGKILL + takeover
 *
 * then writes artifacts/bench/<run-id>.json and .svg and prints the table. Every phase runs
 * on its own namespace; the topics and namespaces stay, named bench-<run-id>-*.
 *
 *   node dist/bench/main.js [--records N] [--batch-sizes 100,500,2000,5000] [--batch1-window-s 30]
 *     [--latency-rps 1000] [--latency-s 20] [--warmup-s 3] [--steady-s 4] [--fsync-s 1]
 *     [--out DIR] [--run-id ID]
 *
 * `--scale` runs the scale phase instead (issue 13, scale-run.ts), alone: machine and
 * versions, then one shape's backlog, its decision, and a restart with the history behind it.
 *
 *   node dist/bench/main.js --scale [--scale-shape narrow|wide] [--scale-records 2000000]
 *     [--scale-keys K] [--scale-partitions P] [--scale-workers W] [--scale-batch-size 500]
 *     [--out DIR] [--run-id ID]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { ledgerBacklog } from '../domain/ledger-traffic.js';
import { defaultBrokers } from '../kafka/kafka-connection.js';
import { profileAttempts } from './attempt-log-profile.js';
import { measureBaseline } from './baseline-throughput.js';
import { renderChart } from './bench-chart.js';
import { BenchContext, repoRoot } from './bench-context.js';
import { type BenchOptions, benchUsage, parseBenchOptions } from './bench-options.js';
import { type BenchResult, formatTable, judgeTargets, type ScaleBenchResult } from './bench-report.js';
import { BulkProducer } from './bulk-producer.js';
import { measureCommitFloor } from './commit-floor.js';
import { probeFsync } from './fsync-probe.js';
import { profileHops } from './hop-profile.js';
import { measureRecovery } from './kill-recovery.js';
import { startLiveChain } from './live-chain.js';
import { measureObservation } from './observation-probe.js';
import { measureLatency } from './publish-view-latency.js';
import { describeMachine, describeVersions } from './run-environment.js';
import { measureScale } from './scale-run.js';
import { measureVerify } from './verify-measure.js';
import { measureWorkers, type ThroughputResult } from './worker-throughput.js';

/** The baselines' poll size (baseline-consumer.ts polls this many). */
const naivePollSize = 500;
const say = (line: string) => process.stderr.write(`${line}\n`);

const options = benchOptions(process.argv.slice(2));
const runDir = join(options.outDir, options.runId);
mkdirSync(runDir, { recursive: true });
const ctx = new BenchContext(
  options.runId,
  runDir,
  process.env.AMENDS_BROKERS ?? defaultBrokers,
  process.env.AMENDS_DATABASE_URL ?? 'postgres://amends:amends-local-only@127.0.0.1:15432/amends?sslmode=disable',
  say,
);
const startedAt = new Date().toISOString();
let exitCode = 0;
try {
  await ctx.migrate();
  const result = options.scale === null ? await fullRun() : await scaleRun(options.scale);
  mkdirSync(options.outDir, { recursive: true });
  const jsonPath = join(options.outDir, `${options.runId}.json`);
  const svgPath = join(options.outDir, `${options.runId}.svg`);
  writeFileSync(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(svgPath, await renderChart(result));
  process.stdout.write(`\n${formatTable(result)}\n\n`);
  say(`wrote ${jsonPath}\nwrote ${svgPath}`);
} catch (error) {
  say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  await ctx.close();
}
process.exit(exitCode);

async function scaleRun(scale: NonNullable<typeof options.scale>): Promise<ScaleBenchResult> {
  say(`bench ${options.runId}: scale run (${scale.shape}); logs in ${runDir}`);
  const machine = describeMachine();
  const versions = await describeVersions(ctx.pool);
  const measured = await measureScale(ctx, scale);
  machine.load_average_end = os.loadavg().map((l) => Math.round(l * 100) / 100);
  const partial = {
    run_id: options.runId,
    started_at: startedAt,
    finished_at: new Date().toISOString(),
    scale: measured,
    machine,
    versions,
  };
  return { ...partial, targets: judgeTargets(partial) };
}

async function fullRun(): Promise<BenchResult> {
  say(`bench ${options.runId}: ${options.records.toLocaleString('en')} records; logs in ${runDir}`);
  const machine = describeMachine();
  say('pg_test_fsync …');
  const stackDir = join(repoRoot, '.stack');
  const fsync = probeFsync(stackDir, options.fsyncSecondsPerTest);
  say(`  fdatasync: ${fsync.fdatasync_ops_per_s ?? 'n/a'} ops/s`);
  const versions = await describeVersions(ctx.pool);

  say('backlog: creating the source topic and publishing …');
  const source = ctx.createSource('src');
  const producer = await BulkProducer.open({ brokers: ctx.brokers, topic: source.manifest.source_topic, lingerMs: 50 });
  const publishStart = Date.now();
  const backlog = ledgerBacklog(
    { keys: source.manifest.config.stock_keys, postsPerDay: 400, firstDay: '2026-03-02', seed: 1, txnPrefix: 'T' },
    options.records,
  );
  for (let i = 0; i < backlog.length; i++) {
    await producer.send(backlog[i] as (typeof backlog)[number], false);
    if ((i + 1) % 50_000 === 0) say(`  ${(i + 1).toLocaleString('en')} handed to the producer`);
  }
  await producer.flush(120_000);
  const publishS = (Date.now() - publishStart) / 1000;
  const ends = new Map(producer.ends);
  await producer.close();
  say(`  ${producer.deliveredCount.toLocaleString('en')} acknowledged in ${publishS.toFixed(1)} s`);

  say(`throughput: 2 workers at batch 1 for a window of ${options.batch1WindowS} s …`);
  const batch1 = await measureWorkers(ctx, source.manifest, ends, 1, options.batch1WindowS);
  const batch1Logs = ['a', 'b'].map((w) => join(ctx.logsDir, `${ctx.name('b1')}-${w}.log`));
  // What bounds batch size 1: a durable commit per record, and an observation per poll.
  const commitFloor = await measureCommitFloor(
    ctx.pool,
    `amends_bench_floor_${options.runId.replaceAll('-', '_')}`,
    300,
  );
  const observation = await measureObservation(ctx.brokers, source.manifest, 100);
  say(
    `  durable commit floor ${commitFloor.ms_per_commit.toFixed(2)} ms, source observation p50 ${observation.p50_ms.toFixed(2)} ms`,
  );
  const runs: ThroughputResult[] = [batch1];
  for (const size of options.batchSizes) {
    say(`throughput: 2 workers at batch ${size} over the whole backlog …`);
    runs.push(await measureWorkers(ctx, source.manifest, ends, size, null));
  }
  const best = runs.filter((r) => r.batch_size !== 1).reduce((a, b) => (b.rps > a.rps ? b : a), batch1);
  // The verifier on the largest drained namespace: the last run over the whole backlog.
  const drained = runs.filter((r) => r.bounded_window_s === null).at(-1);
  say('verify: amendsctl verify --json of the largest drained namespace …');
  const verify = drained ? measureVerify(ctx, drained.manifest_path, `batch ${drained.batch_size}`) : null;
  if (verify)
    say(
      `  ${verify.verdict}: ${verify.records_per_s.toLocaleString('en')} records/s, peak RSS ${verify.peak_rss_mb} MB`,
    );
  say(`naive baseline: 2 consumers, poll ${naivePollSize}, auto-commit …`);
  const naive = await measureBaseline(ctx, 'naive', source.manifest.source_topic, options.records);
  say(`evidence floor: 2 consumers, poll ${naivePollSize}, minimum evidence per poll …`);
  const floor = await measureBaseline(ctx, 'floor', source.manifest.source_topic, options.records);
  say(`Connect-style sink: 2 consumers, poll ${naivePollSize}, upsert per poll …`);
  const connect = await measureBaseline(ctx, 'connect', source.manifest.source_topic, options.records);

  say(`latency: live chain at batch ${best.batch_size} (2 workers, relay, view) …`);
  const chain = await startLiveChain(ctx, best.batch_size);
  const latency = await measureLatency(ctx, chain, options.latencyRps, options.latencyS, options.warmupS);
  // Read before the kills: the restarted worker appends to the same log.
  const hops = profileHops(
    chain.workers.map((w) => join(ctx.logsDir, `${w.name}.log`)),
    join(ctx.logsDir, `${chain.namespace}-relay.log`),
    join(ctx.logsDir, `${chain.namespace}-view.log`),
  );
  const loadDuringLatency = os.loadavg()[0] ?? Number.NaN;
  say('recovery: SIGKILL under load …');
  const recovery = await measureRecovery(ctx, chain, options.latencyRps, options.steadyS);
  await ctx.stopAll();
  await chain.producer.close();

  const rss = ctx.workers.map((w) => Math.round(w.peakRssMb() * 10) / 10);
  const { distribution, ...latencySummary } = latency;
  machine.load_average_end = os.loadavg().map((l) => Math.round(l * 100) / 100);
  const partial: Omit<BenchResult, 'targets'> = {
    run_id: options.runId,
    started_at: startedAt,
    finished_at: new Date().toISOString(),
    backlog: {
      records: options.records,
      partitions: ends.size,
      publish_s: publishS,
      publish_rps: options.records / publishS,
    },
    throughput: {
      batch1_rps: batch1.rps,
      batch1_rps_per_worker: batch1.rps_per_worker,
      batch1_window_s: batch1.bounded_window_s,
      batch1_profile: profileAttempts(batch1Logs),
      batch1_bounds: { durable_commit_floor: commitFloor, source_observation: observation },
      best: { batch_size: best.batch_size, rps: best.rps, rps_per_worker: best.rps_per_worker },
      naive_rps: naive.rps,
      ratio_best_to_naive: best.rps / naive.rps,
      floor_rps: floor.rps,
      ratio_best_to_floor: best.rps / floor.rps,
      connect_rps: connect.rps,
      ratio_best_to_connect: best.rps / connect.rps,
      runs,
      naive: { ...naive, poll_size: naivePollSize, processes: 2 },
      floor: { ...floor, poll_size: naivePollSize, processes: 2 },
      connect: { ...connect, poll_size: naivePollSize, processes: 2 },
    },
    latency_ms: { ...latencySummary, hops, load_average_1m: loadDuringLatency },
    recovery_s: recovery,
    verify,
    rss_mb_peak: Math.max(...rss),
    rss_mb_per_worker_process: rss,
    machine: { ...machine, pg_test_fsync: fsync },
    versions,
    latency_distribution_ms: distribution,
  };
  return { ...partial, targets: judgeTargets(partial) };
}

/** The run's options; `--help` and a bad flag end the process here, with one line for the latter. */
function benchOptions(argv: readonly string[]): BenchOptions {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(benchUsage);
    process.exit(0);
  }
  try {
    return parseBenchOptions(argv, join(repoRoot, 'artifacts', 'bench'));
  } catch (error) {
    say(`bench: ${error instanceof Error ? error.message : String(error)} (see --help)`);
    process.exit(2);
  }
}
