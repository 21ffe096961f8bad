/**
 * The namespace configuration and manifest (docs/design.md#configuration, #manifest).
 * Validation collects every problem and reports them in one line each; unknown
 * members are errors, nothing is defaulted silently except what the spec defaults.
 *
 * Two versions (docs/design.md#configuration): version 1, every stock key listed with its
 * partition, stays valid byte for byte (same members, same digest); version 2 adds a
 * partitioner (the table of version 1, or Kafka's murmur2) and, with murmur2, a default rule.
 * A key's terms are looked up in one place, stock-key-terms.ts.
 */
import { createHash } from 'node:crypto';
import { invalidInput } from '../kernel/amends-error.js';
import { canonicalJson } from './canonical-json.js';
import { type ConfigRevision, parseRevisions } from './config-revision.js';
import {
  checkInteger,
  checkMembers,
  checkStockKeys,
  checkVersionedMembers,
  isPlainObject,
  type Problems,
  partitionsMax,
} from './config-rules.js';
import { isCalendarDate } from './text-rules.js';

/** A stock key listed with its partition: every key of version 1, and of version 2's table. */
export interface StockKeyConfig {
  item: string;
  location: string;
  partition: number;
  opening: number;
  threshold: number;
}

/** A listed key under the murmur2 partitioner: the partitioner gives its partition. */
export interface StockKeyOverride {
  item: string;
  location: string;
  opening: number;
  threshold: number;
}

/** Version 2's default rule: the terms of every valid key that `stock_keys` does not list. */
export interface DefaultStockKey {
  opening: number;
  threshold: number;
}

interface ConfigBase {
  namespace: string;
  ledger_origin: string;
  partitions: number;
  source_incarnation: string;
}

export interface NamespaceConfigV1 extends ConfigBase {
  schema_version: 1;
  stock_keys: StockKeyConfig[];
}

/** Version 2 with the explicit table: version 1's rules, written as version 2. */
export interface TableConfigV2 extends ConfigBase {
  schema_version: 2;
  partitioner: 'table';
  default_stock_key?: null;
  stock_keys: StockKeyConfig[];
}

/** Version 2 with Kafka's default partitioner over the canonical key bytes. */
export interface Murmur2ConfigV2 extends ConfigBase {
  schema_version: 2;
  partitioner: 'murmur2';
  /** Absent or null: no default rule, so an unlisted key is UNKNOWN_KEY. */
  default_stock_key?: DefaultStockKey | null;
  stock_keys: StockKeyOverride[];
}

export type NamespaceConfigV2 = TableConfigV2 | Murmur2ConfigV2;
export type NamespaceConfig = NamespaceConfigV1 | NamespaceConfigV2;

export interface Manifest {
  source_topic: string;
  /** Revision 1: the configuration the namespace was registered with. */
  config: NamespaceConfig;
  /** Revisions 2… as `config-revise` or `manifest-recover` printed them; absent: none known. */
  revisions?: ConfigRevision[];
}

type WithoutBase<C> = C extends unknown ? Omit<C, 'namespace' | 'partitions' | 'source_incarnation'> : never;

/** What `source-create --config FILE` accepts: the rest comes from flags and the broker. */
export type ConfigFile = WithoutBase<NamespaceConfig>;

export const defaultConfigFile: ConfigFile = {
  schema_version: 1,
  ledger_origin: '2026-03-01',
  stock_keys: [{ item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 }],
};
export const defaultPartitions = 2;

const namespacePattern = /^[a-z0-9][a-z0-9-]{0,62}$/;
const incarnationPattern = /^kafka:[0-9a-f]{32}$/;
/** Kafka's legal topic names: at most 249 of [a-zA-Z0-9._-], not "." or "..". */
const topicPattern = /^[a-zA-Z0-9._-]{1,249}$/;

export function validNamespace(ns: string): boolean {
  return namespacePattern.test(ns);
}

export function validTopicName(topic: string): boolean {
  return topicPattern.test(topic) && topic !== '.' && topic !== '..';
}

function report(problems: Problems, what: string): never {
  throw invalidInput(`${what}: ${problems.join('; ')}`);
}

/** Validates a complete namespace configuration (docs/design.md#configuration). */
export function parseNamespaceConfig(value: unknown, what = 'config'): NamespaceConfig {
  const problems: Problems = [];
  if (!isPlainObject(value)) report(['must be a JSON object'], what);
  // report() names `what` once, so members are checked with no prefix.
  const members = ['namespace', 'schema_version', 'ledger_origin', 'partitions', 'stock_keys', 'source_incarnation'];
  const entryPartition = checkVersionedMembers(value.schema_version, value, members, problems);
  if (typeof value.namespace !== 'string' || !validNamespace(value.namespace)) {
    problems.push('namespace must match [a-z0-9][a-z0-9-]{0,62}');
  }
  if (typeof value.ledger_origin !== 'string' || !isCalendarDate(value.ledger_origin)) {
    problems.push('ledger_origin must be a real calendar date YYYY-MM-DD');
  }
  checkInteger(value.partitions, 'partitions', 1, partitionsMax, problems);
  // A partition count that failed its own check bounds no key (it said "within [0, -1]").
  const validCount = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 && n <= partitionsMax;
  const partitions = validCount(value.partitions) ? (value.partitions as number) : undefined;
  checkStockKeys(value.stock_keys, partitions, entryPartition, problems);
  if (typeof value.source_incarnation !== 'string' || !incarnationPattern.test(value.source_incarnation)) {
    problems.push('source_incarnation must be "kafka:" followed by 32 lowercase hex digits');
  }
  if (problems.length > 0) report(problems, what);
  return value as unknown as NamespaceConfig;
}

/**
 * Validates the `--config FILE` object of source-create, before any topic exists: version 1
 * (`schema_version` may be left out) or version 2 with its partitioner and default rule.
 */
export function parseConfigFile(value: unknown, partitions: number, what = 'config file'): ConfigFile {
  const problems: Problems = [];
  if (!isPlainObject(value)) report(['must be a JSON object'], what);
  const version = value.schema_version ?? 1;
  const members = ['ledger_origin', 'stock_keys', 'schema_version'];
  const entryPartition = checkVersionedMembers(version, value, members, problems);
  if (typeof value.ledger_origin !== 'string' || !isCalendarDate(value.ledger_origin)) {
    problems.push('ledger_origin must be a real calendar date YYYY-MM-DD');
  }
  checkStockKeys(value.stock_keys, partitions, entryPartition, problems);
  refuseNoKey(value, problems);
  if (problems.length > 0) report(problems, what);
  // Only the members the file has: a version 2 file without default_stock_key gives a config without one.
  const { schema_version: _, ...rest } = value;
  return { schema_version: version, ...rest } as ConfigFile;
}

/**
 * A new configuration must be able to decide something: with no key listed and no default rule
 * every record would be quarantined UNKNOWN_KEY (issue 35). Checked where a configuration is
 * made (source-create, source-adopt, config-revise), not when a manifest is read: a namespace
 * registered so keeps its evidence readable.
 */
function refuseNoKey(value: Record<string, unknown>, problems: Problems): void {
  const rule = value.default_stock_key;
  if (Array.isArray(value.stock_keys) && value.stock_keys.length === 0 && (rule === undefined || rule === null)) {
    problems.push(
      'stock_keys is empty and there is no default_stock_key, so every record would be UNKNOWN_KEY: list a key, or set default_stock_key (partitioner "murmur2")',
    );
  }
}

export function parseManifest(value: unknown, what = 'manifest'): Manifest {
  if (!isPlainObject(value)) report(['must be a JSON object'], what);
  const problems: Problems = [];
  checkMembers(value, ['source_topic', 'config', 'revisions'], '', problems);
  if (typeof value.source_topic !== 'string' || !validTopicName(value.source_topic)) {
    problems.push('source_topic must be a legal Kafka topic name');
  }
  if (problems.length > 0) report(problems, what);
  const config = parseNamespaceConfig(value.config, `${what}: config`);
  const manifest: Manifest = { source_topic: value.source_topic as string, config };
  if (value.revisions !== undefined) manifest.revisions = parseRevisions(value.revisions, config, `${what}: revisions`);
  return manifest;
}

/** Lowercase hex SHA-256 of the UTF-8 canonical JSON of the configuration (docs/design.md#configuration). */
export function configDigest(config: NamespaceConfig): string {
  return createHash('sha256').update(canonicalJson(config), 'utf8').digest('hex');
}

/** A collision-free map key for (item, location). */
export function stockKeyId(item: string, location: string): string {
  return JSON.stringify([item, location]);
}
