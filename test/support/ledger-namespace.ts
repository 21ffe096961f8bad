/**
 * A drained namespace of a realistic ledger for the verifier's scale tests (issue 14): a
 * bound source of the two-keys configuration, `records` records of the benchmark's ledger
 * traffic (src/domain/ledger-traffic.ts: posts, corrections, cancels, redeliveries, stale
 * revisions, garbage) published by the bulk producer, then decided, relayed and viewed by
 * the real processes — two workers at a large batch size, a relay and a view — which are
 * stopped once everything is drained. What the store holds is what the worker writes.
 */
import { BulkProducer } from '../../src/bench/bulk-producer.js';
import { ledgerTraffic, type TrafficRecord } from '../../src/domain/ledger-traffic.js';
import { listedStockKeys } from '../../src/domain/stock-key-terms.js';
import { testBrokers } from './endpoints.js';
import { twoKeysConfig } from './fixture-stories.js';
import {
  type BoundSource,
  createBoundSource,
  expectCleanStop,
  startAmends,
  stopAllAmends,
  type TransportProbe,
} from './transport-process.js';

/** Records per worker transaction: large, so the namespace builds in seconds. */
const buildBatchSize = 2_000;
const postsPerDay = 100;
/** How long each stage of the build may take (decided, published, viewed). */
const stageBudgetMs = 240_000;

export interface LedgerNamespace {
  source: BoundSource;
  records: number;
  /** Build time per stage, for the test's log. */
  build_s: { publish: number; drain: number };
}

export async function buildLedgerNamespace(
  topics: Set<string>,
  probe: TransportProbe,
  records: number,
  seed: number,
): Promise<LedgerNamespace> {
  const source = await createBoundSource(topics, twoKeysConfig);
  const started = Date.now();
  await publishTraffic(source, records, seed, 'L');
  const published = Date.now();
  const args = ['--batch-size', String(buildBatchSize)];
  startAmends('worker', source.manifestPath, args);
  startAmends('worker', source.manifestPath, args);
  const relay = startAmends('relay', source.manifestPath);
  const view = startAmends('view', source.manifestPath);
  await probe.waitDecided(source.namespace, records, stageBudgetMs);
  const outbox = await probe.outbox(source.namespace);
  await probe.waitPublished(source.namespace, outbox.total, stageBudgetMs);
  await probe.waitViewCaughtUp(source, stageBudgetMs);
  await expectCleanStop(relay, view);
  await stopAllAmends();
  return {
    source,
    records,
    build_s: { publish: (published - started) / 1000, drain: (Date.now() - published) / 1000 },
  };
}

/** Publishes `records` more records of ledger traffic (a stream of its own: `txnPrefix`). */
export async function publishTraffic(source: BoundSource, records: number, seed: number, txnPrefix: string) {
  const traffic = ledgerTraffic({
    keys: listedStockKeys(source.manifest.config),
    postsPerDay,
    firstDay: '2026-03-02',
    seed,
    txnPrefix,
  });
  const producer = await BulkProducer.open({ brokers: testBrokers, topic: source.topic, lingerMs: 50 });
  try {
    for (let i = 0; i < records; i++) await producer.send(traffic.next().value as TrafficRecord, false);
    await producer.flush(120_000);
  } finally {
    await producer.close();
  }
}
