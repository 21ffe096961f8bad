/**
 * Recovery under the offered load (docs/design.md#benchmarks), on the live chain:
 *
 * - restart: SIGKILL the worker owning partition 0 and start it again at once with the same
 *   `--instance-id`, as a supervisor would (static membership: it gets its partitions back
 *   without waiting for the session to expire). `frontier_moving`: kill → the first commit of
 *   those partitions under a new epoch (decisions.decided_at); `caught_up`: kill → their lag
 *   (producer-acknowledged end − frontier) back at or below the largest lag seen in the
 *   seconds before the kill.
 * - takeover: SIGKILL that worker again and leave it dead: kill → the first commit of its
 *   partitions under the survivor (a new epoch owned by the other worker's id), which needs
 *   the session timeout (6 s) to expire first.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pollUntil } from '../io/process/poll-until.js';
import { namespaceId } from '../io/store/namespace-registry.js';
import type { BenchContext } from './bench-context.js';
import type { BenchProcess } from './bench-process.js';
import type { LiveChain } from './live-chain.js';
import { OfferedLoad } from './offered-load.js';
import { partitionStates } from './store-probe.js';

export interface RecoveryResult {
  frontier_moving: number;
  caught_up: number;
  takeover: number;
  takeover_caught_up: number;
  offered_rps: number;
  /** The lag (records) that counts as caught up: the largest seen before the kill. */
  caught_up_lag: number;
}

const sampleMs = 50;
const limitMs = 90_000;

export async function measureRecovery(
  ctx: BenchContext,
  chain: LiveChain,
  offeredRps: number,
  steadyS: number,
): Promise<RecoveryResult> {
  const load = new OfferedLoad(chain.producer, chain.traffic, offeredRps);
  try {
    ctx.progress(`  steady load ${steadyS} s at ${offeredRps} records/s before the kill`);
    const steadyLag = await largestLag(ctx, chain, steadyS * 1000);
    const threshold = Math.max(steadyLag, 1);

    const [victim, survivor] = await ownerOfPartitionZero(ctx, chain);
    ctx.progress(`  SIGKILL ${victim.name}, restart with the same --instance-id`);
    const restart = await killAndWatch(ctx, chain, victim, threshold, () => {
      const again = chain.startWorker(victim.name);
      chain.workers.splice(chain.workers.indexOf(victim), 1, again);
      return null;
    });

    ctx.progress(`  steady load ${steadyS} s, then SIGKILL ${victim.name} for good: ${survivor.name} takes over`);
    await sleep(steadyS * 1000);
    const restarted = chain.workers.find((w) => w.name === victim.name && w.running);
    if (restarted === undefined) throw new Error(`the restarted ${victim.name} is not running`);
    await untilOwning(ctx, chain, restarted);
    const takeover = await killAndWatch(ctx, chain, restarted, threshold, () => survivor.name);
    return {
      frontier_moving: restart.moving,
      caught_up: restart.caughtUp,
      takeover: takeover.moving,
      takeover_caught_up: takeover.caughtUp,
      offered_rps: offeredRps,
      caught_up_lag: threshold,
    };
  } finally {
    await load.stop();
  }
}

/** The worker owning partition 0 (by the partitions row's owner), and the other one. */
async function ownerOfPartitionZero(ctx: BenchContext, chain: LiveChain): Promise<[BenchProcess, BenchProcess]> {
  const owner = (await partitionStates(ctx.pool, chain.namespace)).get(0)?.owner;
  const victim = chain.workers.find((w) => w.name === owner);
  const survivor = chain.workers.find((w) => w.name !== owner);
  if (victim === undefined || survivor === undefined) throw new Error(`partition 0 is owned by ${owner}, not a worker`);
  return [victim, survivor];
}

/**
 * Waits until `worker` owns a partition again. A restart that came back after the session
 * timeout (a starved machine: seen in the suite's smoke run) found the survivor holding both
 * partitions, and gets one back only from the rebalance its own join starts.
 */
async function untilOwning(ctx: BenchContext, chain: LiveChain, worker: BenchProcess): Promise<void> {
  await pollUntil(
    `partition owned by the restarted ${worker.name}`,
    async () => {
      const states = await partitionStates(ctx.pool, chain.namespace);
      return [...states.values()].some((s) => s.owner === worker.name) ? true : undefined;
    },
    { budgetMs: limitMs, pollMs: sampleMs },
  );
}

async function largestLag(ctx: BenchContext, chain: LiveChain, forMs: number): Promise<number> {
  let largest = 0;
  const until = Date.now() + forMs;
  while (Date.now() < until) {
    const states = await partitionStates(ctx.pool, chain.namespace);
    for (const [p, end] of chain.producer.ends) largest = Math.max(largest, end - (states.get(p)?.frontier ?? 0));
    await sleep(sampleMs);
  }
  return largest;
}

/**
 * SIGKILLs `victim`, runs `afterKill` (which may start a replacement and names the expected new
 * owner, or null for any), and times the victim's partitions: first commit under a newer epoch,
 * then lag back to `threshold`.
 */
async function killAndWatch(
  ctx: BenchContext,
  chain: LiveChain,
  victim: BenchProcess,
  threshold: number,
  afterKill: () => string | null,
): Promise<{ moving: number; caughtUp: number }> {
  const before = await partitionStates(ctx.pool, chain.namespace);
  const owned = [...before.values()].filter((s) => s.owner === victim.name);
  if (owned.length === 0) throw new Error(`${victim.name} owns no partition`);
  const killedAt = Date.now();
  await victim.crash();
  const newOwner = afterKill();
  let moving: number | null = null;
  for (;;) {
    if (Date.now() - killedAt > limitMs) {
      const what = moving === null ? 'commit again' : `catch up to a lag of ${threshold}`;
      throw new Error(`the partitions of ${victim.name} did not ${what} within ${limitMs / 1000} s of the kill`);
    }
    await sleep(sampleMs);
    if (moving === null) {
      const first = await firstCommitsAfter(ctx, chain.namespace, owned, newOwner);
      if (first !== null) moving = (first - killedAt) / 1000;
      continue;
    }
    const states = await partitionStates(ctx.pool, chain.namespace);
    const lagging = owned.some(
      (s) => (chain.producer.ends.get(s.partition) ?? 0) - (states.get(s.partition)?.frontier ?? 0) > threshold,
    );
    if (!lagging) return { moving, caughtUp: (Date.now() - killedAt) / 1000 };
  }
}

/** The latest of the partitions' first commit times under an epoch newer than `owned`'s, or null while one lacks it. */
async function firstCommitsAfter(
  ctx: BenchContext,
  namespace: string,
  owned: { partition: number; epoch: number }[],
  newOwner: string | null,
): Promise<number | null> {
  const states = await partitionStates(ctx.pool, namespace);
  const nsId = await namespaceId(ctx.pool, namespace);
  let latest = 0;
  for (const s of owned) {
    const now = states.get(s.partition);
    if (now === undefined || now.epoch <= s.epoch) return null;
    if (newOwner !== null && now.owner !== newOwner) return null;
    const r = await ctx.pool.query<{ first_ms: number | null }>(
      `SELECT extract(epoch FROM min(decided_at))::float8 * 1000 AS first_ms
         FROM decisions WHERE ns = $1 AND partition = $2 AND epoch > $3`,
      [nsId, s.partition, s.epoch],
    );
    const first = r.rows[0]?.first_ms ?? null;
    if (first === null) return null;
    latest = Math.max(latest, first);
  }
  return latest;
}
