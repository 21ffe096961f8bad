/**
 * What the configuration says of one (item, location) (docs/design.md#configuration): whether it
 * is a stock key, and if so its partition, opening and threshold. The one lookup the worker's
 * engine, fixture loading, the view and the loads use; the verifier's oracles have their own
 * (src/verify/oracle-key-terms.ts, test/support/reference-oracle.ts).
 *
 * - Version 1 and version 2's table: only listed keys, on their listed partition.
 * - Version 2's murmur2: a listed key (an override) or, with a default rule, any key whose item
 *   and location follow the envelope's text rules; its partition is Kafka's default
 *   partitioner over the key's canonical bytes (canonicalKeyBytes), never the record's own key
 *   bytes, so a valid key written with other whitespace or member order is routed as its value.
 *
 * Memory stays bounded: listed keys are indexed once per configuration object; a default-rule
 * key's terms are computed per call and never cached.
 */
import { canonicalJson } from './canonical-json.js';
import { type NamespaceConfig, type StockKeyConfig, type StockKeyOverride, stockKeyId } from './config.js';
import { murmur2Partition } from './murmur2.js';
import { isTextField } from './text-rules.js';

/** A stock key's terms: where its records belong and what its balances start from. */
export interface StockKeyTerms {
  item: string;
  location: string;
  partition: number;
  opening: number;
  threshold: number;
}

const utf8 = new TextEncoder();

/** The key's canonical bytes: UTF-8 of the RFC 8785 JSON `{"item":…,"location":…}`, what amends itself writes. */
export function canonicalKeyBytes(item: string, location: string): Uint8Array {
  return utf8.encode(canonicalJson({ item, location }));
}

/** The stock key (item, location) and its terms, or undefined when it is not one. */
export function stockKeyTerms(config: NamespaceConfig, item: string, location: string): StockKeyTerms | undefined {
  if (config.schema_version === 1 || config.partitioner === 'table') {
    return tableIndex(config).get(stockKeyId(item, location));
  }
  const terms = overrideIndex(config).get(stockKeyId(item, location)) ?? config.default_stock_key;
  // The default rule covers keys that follow the envelope's rules; overrides were checked when parsed.
  if (terms === undefined || terms === null || !isTextField(item) || !isTextField(location)) return undefined;
  const partition = murmur2Partition(canonicalKeyBytes(item, location), config.partitions);
  return { item, location, partition, opening: terms.opening, threshold: terms.threshold };
}

/** Every listed key with its terms, in configuration order (loads and showcases that enumerate keys). */
export function listedStockKeys(config: NamespaceConfig): StockKeyTerms[] {
  return config.stock_keys.map((k) => stockKeyTerms(config, k.item, k.location) as StockKeyTerms);
}

// A configuration is immutable once parsed; index each one once (a WeakMap: no growth per record).
const tables = new WeakMap<NamespaceConfig, Map<string, StockKeyConfig>>();
const overrides = new WeakMap<NamespaceConfig, Map<string, StockKeyOverride>>();

function tableIndex(config: NamespaceConfig & { stock_keys: StockKeyConfig[] }): Map<string, StockKeyConfig> {
  let index = tables.get(config);
  if (index === undefined) {
    index = new Map(config.stock_keys.map((k) => [stockKeyId(k.item, k.location), k]));
    tables.set(config, index);
  }
  return index;
}

function overrideIndex(config: NamespaceConfig): Map<string, StockKeyOverride> {
  let index = overrides.get(config);
  if (index === undefined) {
    index = new Map(config.stock_keys.map((k) => [stockKeyId(k.item, k.location), k]));
    overrides.set(config, index);
  }
  return index;
}
