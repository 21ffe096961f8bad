/**
 * The scale run's backlog (issue 13): a source topic of `keys` stock keys spread round-robin
 * over `partitions` partitions (a config file written into the run directory, then the real
 * `amendsctl source-create`), and `records` records of ledger-traffic.ts published through
 * the bulk producer. The records are generated and handed over one at a time and only
 * counted (distinct transactions per partition): the harness never holds the backlog.
 *
 * Posts per key and day: a key's records over `daysPerKeyTarget`, at least one. 2 keys of
 * 1,000,000 records each post 400 a day (the normal bench's figure) over ~2,200 days;
 * 2,000 keys of 1,000 records one a day over ~890 days. Either way the range of days grows
 * through the whole backlog.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest, StockKeyConfig } from '../domain/config.js';
import { ledgerTraffic, type TrafficRecord } from '../domain/ledger-traffic.js';
import { listedStockKeys } from '../domain/stock-key-terms.js';
import type { BenchContext } from './bench-context.js';
import type { ScaleOptions } from './bench-options.js';
import { BulkProducer } from './bulk-producer.js';

export interface ScaleBacklog {
  manifest: Manifest;
  manifestPath: string;
  namespace: string;
  /** The same traffic stream, positioned after the backlog: the restart's tail continues it. */
  traffic: Iterator<TrafficRecord>;
  producer: BulkProducer;
  /** Per partition: the producer-acknowledged end (last offset + 1). */
  ends: Map<number, number>;
  /** Distinct transactions (new posts) per partition. */
  transactionsByPartition: Map<number, number>;
  transactions: number;
  posts_per_day: number;
  publish_s: number;
}

const daysPerKeyTarget = 2_500;
/** librdkafka's local queue while publishing: bounds the harness's memory, not its speed. */
const producerQueueMax = 100_000;
const progressEvery = 200_000;

export async function publishScaleBacklog(
  ctx: BenchContext,
  options: ScaleOptions,
  suffix: string,
): Promise<ScaleBacklog> {
  const configPath = join(ctx.runDir, `${ctx.name(suffix)}.config.json`);
  writeFileSync(configPath, `${JSON.stringify(scaleConfig(options.keys, options.partitions), null, 2)}\n`);
  const { manifest, path } = ctx.createSource(suffix, { configPath, partitions: options.partitions });
  const postsPerDay = Math.max(1, Math.round(options.records / options.keys / daysPerKeyTarget));
  const traffic = ledgerTraffic({
    keys: listedStockKeys(manifest.config),
    postsPerDay,
    firstDay: '2026-03-02',
    seed: 13,
    txnPrefix: 'S',
  });
  const producer = await BulkProducer.open({
    brokers: ctx.brokers,
    topic: manifest.source_topic,
    lingerMs: 50,
    queueMaxMessages: producerQueueMax,
  });
  const transactionsByPartition = new Map<number, number>();
  const started = Date.now();
  try {
    for (let i = 0; i < options.records; i++) {
      const record = traffic.next().value as TrafficRecord;
      if (record.kind === 'post') {
        transactionsByPartition.set(record.partition, (transactionsByPartition.get(record.partition) ?? 0) + 1);
      }
      await producer.send(record, false);
      if ((i + 1) % progressEvery === 0) ctx.progress(`  ${(i + 1).toLocaleString('en')} handed to the producer`);
    }
    await producer.flush(300_000);
  } catch (error) {
    await producer.close();
    throw error;
  }
  const publishS = (Date.now() - started) / 1000;
  const transactions = [...transactionsByPartition.values()].reduce((a, b) => a + b, 0);
  return {
    manifest,
    manifestPath: path,
    namespace: manifest.config.namespace,
    traffic,
    producer,
    ends: new Map(producer.ends),
    transactionsByPartition,
    transactions,
    posts_per_day: postsPerDay,
    publish_s: publishS,
  };
}

/** `keys` stock keys, key i on partition i mod `partitions` (every partition gets keys). */
export function scaleConfig(
  keys: number,
  partitions: number,
): { schema_version: 1; ledger_origin: string; stock_keys: StockKeyConfig[] } {
  const width = String(keys - 1).length;
  const stockKeys = Array.from({ length: keys }, (_, i) => ({
    item: `item-${String(i).padStart(width, '0')}`,
    location: `site-${i % 10}`,
    partition: i % partitions,
    opening: 100,
    threshold: 10,
  }));
  return { schema_version: 1, ledger_origin: '2026-03-01', stock_keys: stockKeys };
}
