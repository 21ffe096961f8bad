/**
 * Throughput of two `amends worker` processes at one batch size, on a fresh namespace over
 * the pre-loaded backlog topic (a rebuild: decided from offset 0). Records/s are read from
 * PostgreSQL afterwards: decisions between the first and the last commit's transaction time.
 *
 * A bounded run (batch size 1, where the whole backlog would take many minutes) stops the
 * workers after a fixed time window of commits and measures that prefix of the backlog.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Manifest } from '../domain/config.js';
import type { BenchContext } from './bench-context.js';
import { commitRate, partitionStates } from './store-probe.js';

export interface ThroughputResult {
  /** The run's namespace (a rebuild over the backlog), e.g. for the verifier's figures. */
  manifest_path: string;
  batch_size: number;
  /** Both workers together. */
  rps: number;
  rps_per_worker: number;
  records: number;
  seconds: number;
  /** Set when only a prefix was decided: the window in seconds after the first commit. */
  bounded_window_s: number | null;
  /** Claims beyond one per partition (a rebalance while the two workers joined). */
  extra_claims: number;
  /** PostgreSQL's own work per record inside the commit statement (the last batch of each partition). */
  server_work_us_per_record: number;
  peak_rss_mb: number[];
  /** User + system CPU seconds of both worker processes together, start-up included. */
  cpu_s: number;
}

export async function measureWorkers(
  ctx: BenchContext,
  source: Manifest,
  ends: ReadonlyMap<number, number>,
  batchSize: number,
  windowS: number | null,
): Promise<ThroughputResult> {
  const label = `b${batchSize}`;
  const { manifest, path } = ctx.rebuildManifest(source, label);
  const namespace = manifest.config.namespace;
  const total = [...ends.values()].reduce((a, b) => a + b, 0);
  const workers = ['a', 'b'].map((w) =>
    ctx.start('worker', path, `${namespace}-${w}`, ['--batch-size', String(batchSize)]),
  );
  const started = Date.now();
  const timeoutMs = 120_000 + (total / Math.min(batchSize * 50, 2_000)) * 1000;
  let firstCommitAt: number | null = null;
  let lastReport = 0;
  let bounded = false;
  for (;;) {
    await sleep(250);
    const states = await partitionStates(ctx.pool, namespace);
    const decided = [...states.values()].reduce((a, s) => a + s.frontier, 0);
    if (firstCommitAt === null && decided > 0) firstCommitAt = Date.now();
    const done = [...ends].every(([p, end]) => (states.get(p)?.frontier ?? 0) >= end);
    const windowOver = windowS !== null && firstCommitAt !== null && Date.now() - firstCommitAt >= windowS * 1000;
    if (Date.now() - lastReport > 5_000 || done || windowOver) {
      lastReport = Date.now();
      const s = ((Date.now() - (firstCommitAt ?? Date.now())) / 1000).toFixed(0);
      ctx.progress(
        `  batch ${batchSize}: ${decided.toLocaleString('en')} / ${total.toLocaleString('en')} decided (${s} s)`,
      );
    }
    bounded = windowOver && !done;
    if (done || windowOver) break;
    const dead = workers.find((w) => !w.running);
    if (dead !== undefined) throw new Error(`worker ${dead.name} exited early (see ${ctx.logsDir}/${dead.name}.log)`);
    if (Date.now() - started > timeoutMs) throw new Error(`batch ${batchSize}: not done within ${timeoutMs / 1000} s`);
  }
  const peak = workers.map((w) => w.peakRssMb());
  const cpu = workers.reduce((sum, w) => sum + w.cpuSeconds(), 0);
  await Promise.all(workers.map((w) => w.stop()));
  const rate = await commitRate(ctx.pool, namespace);
  return {
    manifest_path: path,
    batch_size: batchSize,
    rps: rate.rps,
    rps_per_worker: rate.rps / workers.length,
    records: rate.records,
    seconds: rate.seconds,
    bounded_window_s: bounded ? windowS : null,
    extra_claims: rate.extraClaims,
    server_work_us_per_record: rate.serverWorkUsPerRecord,
    peak_rss_mb: peak,
    cpu_s: cpu,
  };
}
