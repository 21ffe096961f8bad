/**
 * `npm run bench` (docs/design.md#benchmarks, not part of npm test): on the local stack,
 *
 *   pg_test_fsync → backlog (≥ 200,000 records, 2 partitions) → 2 workers at batch 1 (a bounded
 *   window) and at each batch size → the baselines → the live chain (2 workers, relay,
 *   view) at a fixed offered load: latency → SIGKILL + restart, SIGKILL + takeover (full-run.ts)
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
import { defaultBrokers } from '../io/kafka/kafka-connection.js';
import { errorMessage } from '../kernel/error-message.js';
import { renderChart } from './bench-chart.js';
import { BenchContext, repoRoot } from './bench-context.js';
import { type BenchOptions, benchUsage, parseBenchOptions } from './bench-options.js';
import { formatTable, judgeTargets, type ScaleBenchResult } from './bench-report.js';
import { fullRun } from './full-run.js';
import { describeMachine, describeVersions } from './run-environment.js';
import { measureScale } from './scale-run.js';

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
  const result = options.scale === null ? await fullRun(ctx, options, startedAt) : await scaleRun(options.scale);
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

/** The run's options; `--help` and a bad flag end the process here, with one line for the latter. */
function benchOptions(argv: readonly string[]): BenchOptions {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(benchUsage);
    process.exit(0);
  }
  try {
    return parseBenchOptions(argv, join(repoRoot, 'artifacts', 'bench'));
  } catch (error) {
    say(`bench: ${errorMessage(error)} (see --help)`);
    process.exit(2);
  }
}
