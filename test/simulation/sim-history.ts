/**
 * A random source topic for one seed: a namespace configuration and each partition's records
 * as raw bytes, with corrections, cancellations, redeliveries, garbage and offset gaps
 * (aborted transactions), sometimes with a trailing control-record tail.
 */
import type { NamespaceConfig, NamespaceConfigV1, StockKeyConfig, TableConfigV2 } from '../../src/domain/config.js';
import { type StockKeyTerms, stockKeyTerms } from '../../src/domain/stock-key-terms.js';
import type { SourceRecord } from '../../src/machines/ports.js';
import type { Prng } from './prng.js';

export interface SimTopic {
  config: NamespaceConfig;
  /** Per partition, in offset order. */
  records: SourceRecord[][];
  /** Per partition: the read-committed end (last stable offset). */
  ends: number[];
}

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);
const keyBytes = (item: string, location: string) => bytes(JSON.stringify({ item, location }));

const days = ['2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04'];

export function randomTopic(rng: Prng): SimTopic {
  const partitions = rng.int(1, 3);
  const stockKeys: StockKeyConfig[] = [];
  const names = ['widget', 'gadget', 'sprocket', 'gizmo'];
  for (let i = 0; i < rng.int(1, 4); i++) {
    stockKeys.push({
      item: names[i] ?? `item${i}`,
      location: rng.pick(['berlin', 'paris']),
      partition: rng.int(0, partitions - 1),
      opening: rng.int(-20, 100),
      threshold: rng.int(0, 40),
    });
  }
  const unique = stockKeys.filter(
    (k, i) => stockKeys.findIndex((o) => o.item === k.item && o.location === k.location) === i,
  );
  const config = randomVersion(rng, {
    namespace: 'sim',
    schema_version: 1,
    ledger_origin: '2026-03-01',
    partitions,
    stock_keys: unique,
    source_incarnation: `kafka:${'0'.repeat(32)}`,
  });
  const records: SourceRecord[][] = [];
  const ends: number[] = [];
  for (let p = 0; p < partitions; p++) {
    const list: SourceRecord[] = [];
    let offset = 0;
    const count = rng.int(0, 14);
    for (let i = 0; i < count; i++) {
      // Aborted transactions leave gaps in the visible offsets.
      if (rng.chance(0.1)) offset += rng.int(1, 2);
      list.push({ partition: p, offset, ...randomPayload(rng, config, p) });
      offset++;
    }
    records.push(list);
    // A trailing control record (a commit marker) stays below the end: no decision for it.
    ends.push(offset + (rng.chance(0.2) ? 1 : 0));
  }
  return { config, records, ends };
}

/**
 * The same keys as version 1, version 2's table, or version 2's murmur2 (the listed keys as
 * overrides), with or without a default rule.
 */
function randomVersion(rng: Prng, v1: NamespaceConfigV1): NamespaceConfig {
  const roll = rng.int(0, 3);
  if (roll === 0) return v1;
  if (roll === 1) {
    const table: TableConfigV2 = { ...v1, schema_version: 2, partitioner: 'table' };
    return table;
  }
  const overrides = v1.stock_keys.map(({ partition: _, ...k }) => k);
  const rule = roll === 3 ? { opening: rng.int(-20, 100), threshold: rng.int(0, 40) } : null;
  return { ...v1, schema_version: 2, partitioner: 'murmur2', default_stock_key: rule, stock_keys: overrides };
}

/** Keys a record may name: the listed ones and some never listed (stock keys only under a default rule). */
const unlistedKeys = [
  { item: 'drifter', location: 'berlin' },
  { item: 'nomad', location: 'paris' },
  { item: 'unknown', location: 'nowhere' },
];

function randomPayload(rng: Prng, config: NamespaceConfig, partition: number): Pick<SourceRecord, 'key' | 'value'> {
  const stockKeys = [...config.stock_keys, ...unlistedKeys]
    .map((k) => stockKeyTerms(config, k.item, k.location))
    .filter((k): k is StockKeyTerms => k !== undefined);
  const own = stockKeys.filter((k) => k.partition === partition);
  const other = stockKeys.filter((k) => k.partition !== partition);
  const roll = rng.next();
  const envelopeFor = (k: { item: string; location: string }) => {
    const txn = `T${rng.int(1, 4)}`;
    const rev = rng.int(1, 3);
    if (rng.chance(0.2)) return { schema: 1, txn, rev, op: 'cancel', item: k.item, location: k.location };
    return {
      schema: 1,
      txn,
      rev,
      op: 'post',
      item: k.item,
      location: k.location,
      day: rng.pick(days),
      qty: rng.int(-60, 60),
    };
  };
  if (roll < 0.05) return { key: keyBytes('widget', 'berlin'), value: bytes('{"schema":1,"txn":') };
  if (roll < 0.08) return { key: null, value: null };
  if (roll < 0.12 || own.length === 0) {
    const k = { item: 'unknown', location: 'nowhere' };
    return { key: keyBytes(k.item, k.location), value: bytes(JSON.stringify(envelopeFor(k))) };
  }
  if (roll < 0.16 && other.length > 0) {
    const k = rng.pick(other);
    return { key: keyBytes(k.item, k.location), value: bytes(JSON.stringify(envelopeFor(k))) };
  }
  const k = rng.pick(own);
  if (roll < 0.2) return { key: keyBytes(k.item, 'elsewhere'), value: bytes(JSON.stringify(envelopeFor(k))) };
  return { key: keyBytes(k.item, k.location), value: bytes(JSON.stringify(envelopeFor(k))) };
}

/** The last visible offset + 1 of a partition: where a caught-up frontier stands. */
export function caughtUpFrontier(records: readonly SourceRecord[]): number {
  const last = records[records.length - 1];
  return last === undefined ? 0 : last.offset + 1;
}
