/**
 * The whole chain running live for the latency and recovery phases: a fresh source topic and
 * its output topic (output-create first), two workers, a relay and a view, and a producer
 * with a small linger that offers load to the source.
 */
import type { Manifest } from '../domain/config.js';
import { ledgerTraffic, type TrafficRecord } from '../domain/ledger-traffic.js';
import { listedStockKeys } from '../domain/stock-key-terms.js';
import { pollUntil } from '../io/process/poll-until.js';
import type { BenchContext } from './bench-context.js';
import type { BenchProcess } from './bench-process.js';
import { BulkProducer } from './bulk-producer.js';
import { partitionStates, viewCaughtUp } from './store-probe.js';

export interface LiveChain {
  manifest: Manifest;
  manifestPath: string;
  namespace: string;
  batchSize: number;
  workers: BenchProcess[];
  producer: BulkProducer;
  traffic: Iterator<TrafficRecord>;
  startWorker(instanceId: string): BenchProcess;
}

export async function startLiveChain(ctx: BenchContext, batchSize: number): Promise<LiveChain> {
  const { manifest, path } = ctx.createSource('live');
  const namespace = manifest.config.namespace;
  ctx.amendsctl(['output-create', '--manifest', path, '--topic', `${manifest.source_topic}-out`]);
  const startWorker = (id: string) => ctx.start('worker', path, id, ['--batch-size', String(batchSize)]);
  const workers = [startWorker(`${namespace}-a`), startWorker(`${namespace}-b`)];
  ctx.start('relay', path, `${namespace}-relay`);
  ctx.start('view', path, `${namespace}-view`);
  const producer = await BulkProducer.open({ brokers: ctx.brokers, topic: manifest.source_topic, lingerMs: 1 });
  // 25 posts per key and day: a day's latest version (its view row) samples one record in 25,
  // and a key's history stays near a thousand days over the phases, as a few years of a real
  // ledger would.
  const traffic = ledgerTraffic({
    keys: listedStockKeys(manifest.config),
    postsPerDay: 25,
    firstDay: '2026-03-02',
    seed: 7,
    txnPrefix: 'L',
  });
  const chain = { manifest, manifestPath: path, namespace, batchSize, workers, producer, traffic, startWorker };
  await waitChainReady(ctx, chain, 60_000);
  return chain;
}

/**
 * Waits until each worker owns one partition (so no join rebalance falls into a measurement)
 * and the relay and the view have written their first heartbeat.
 */
async function waitChainReady(ctx: BenchContext, chain: LiveChain, timeoutMs: number): Promise<void> {
  const ready = async (): Promise<true | undefined> => {
    const owners = new Set([...(await partitionStates(ctx.pool, chain.namespace)).values()].map((s) => s.owner));
    const roles = await ctx.pool.query<{ role: string }>(
      'SELECT DISTINCT role FROM worker_heartbeats WHERE namespace = $1',
      [chain.namespace],
    );
    const running = new Set(roles.rows.map((r) => r.role));
    const all = chain.workers.every((w) => owners.has(w.name)) && running.has('relay') && running.has('view');
    return all ? true : undefined;
  };
  await pollUntil('ready live chain', ready, { budgetMs: timeoutMs, pollMs: 200 });
}

/** Waits until every record the producer delivered is decided, relayed and in the view. */
export async function waitChainCaughtUp(ctx: BenchContext, chain: LiveChain, timeoutMs: number): Promise<void> {
  const caughtUp = async (): Promise<true | undefined> => {
    const states = await partitionStates(ctx.pool, chain.namespace);
    const decided = [...chain.producer.ends].every(([p, end]) => (states.get(p)?.frontier ?? 0) >= end);
    return decided && (await viewCaughtUp(ctx.pool, chain.namespace)) ? true : undefined;
  };
  await pollUntil('caught-up live chain', caughtUp, { budgetMs: timeoutMs, pollMs: 100 });
}
