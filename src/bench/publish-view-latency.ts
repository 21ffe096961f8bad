/**
 * Latency at a fixed offered load, publish → committed decision → view visible:
 *
 *   producer send time (harness clock, when the record is handed to the client)
 *     → output_versions.created_at (the worker's commit statement, PostgreSQL clock)
 *     → view_rows.applied_at (the view's apply, PostgreSQL clock)
 *
 * One machine, one clock. One sample per view row: the latest version of each (key, day),
 * caused by a record published inside the measured window (warm-up records excluded).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchContext } from './bench-context.js';
import { type LiveChain, waitChainCaughtUp } from './live-chain.js';
import { OfferedLoad } from './offered-load.js';
import { latencySamples } from './store-probe.js';

export interface LatencyResult {
  offered_rps: number;
  achieved_rps: number;
  seconds: number;
  batch_size: number;
  samples: number;
  p50: number;
  p99: number;
  max: number;
  /** Send → the worker's commit statement (output_versions.created_at). */
  publish_to_commit_ms: { p50: number; p99: number };
  /** Commit statement → view apply: relay + output topic + view. */
  commit_to_view_ms: { p50: number; p99: number };
  /** Every publish → view latency in ms, for the chart. */
  distribution: number[];
}

export async function measureLatency(
  ctx: BenchContext,
  chain: LiveChain,
  offeredRps: number,
  seconds: number,
  warmupS: number,
): Promise<LatencyResult> {
  ctx.progress(`  warm-up: ${warmupS} s at ${offeredRps} records/s`);
  const warmup = new OfferedLoad(chain.producer, chain.traffic, offeredRps);
  await sleep(warmupS * 1000);
  await warmup.stop();
  await chain.producer.flush(30_000);
  await waitChainCaughtUp(ctx, chain, 120_000);
  ctx.progress(`  measuring: ${seconds} s at ${offeredRps} records/s`);
  const windowStart = Date.now();
  const load = new OfferedLoad(chain.producer, chain.traffic, offeredRps);
  await sleep(seconds * 1000);
  const sent = await load.stop();
  const windowEnd = Date.now();
  await chain.producer.flush(30_000);
  await waitChainCaughtUp(ctx, chain, 120_000);

  const total: number[] = [];
  const toCommit: number[] = [];
  const toView: number[] = [];
  for (const s of await latencySamples(ctx.pool, chain.namespace)) {
    const sentAt = chain.producer.sendTimes.get(`${s.partition}:${s.offset}`);
    if (sentAt === undefined || sentAt < windowStart || sentAt > windowEnd) continue;
    total.push(s.viewedMs - sentAt);
    toCommit.push(s.committedMs - sentAt);
    toView.push(s.viewedMs - s.committedMs);
  }
  if (total.length === 0) throw new Error('no latency samples: no view row was caused by a measured record');
  return {
    offered_rps: offeredRps,
    achieved_rps: sent / ((windowEnd - windowStart) / 1000),
    seconds,
    batch_size: chain.batchSize,
    samples: total.length,
    p50: percentile(total, 50),
    p99: percentile(total, 99),
    max: Math.max(...total),
    publish_to_commit_ms: { p50: percentile(toCommit, 50), p99: percentile(toCommit, 99) },
    commit_to_view_ms: { p50: percentile(toView, 50), p99: percentile(toView, 99) },
    distribution: total.map((ms) => Math.round(ms * 10) / 10),
  };
}

/** Nearest-rank percentile. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? Number.NaN;
}
