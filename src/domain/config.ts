/**
 * The namespace configuration and manifest (docs/design.md#configuration, #manifest).
 * Validation collects every problem and reports them in one line each; unknown
 * members are errors, nothing is defaulted silently except what the spec defaults.
 */
import { createHash } from 'node:crypto';
import { invalidInput } from '../kernel/amends-error.js';
import { canonicalJson } from './canonical-json.js';
import { isCalendarDate, isTextField } from './text-rules.js';

export interface StockKeyConfig {
  item: string;
  location: string;
  partition: number;
  opening: number;
  threshold: number;
}

export interface NamespaceConfig {
  namespace: string;
  schema_version: 1;
  ledger_origin: string;
  partitions: number;
  stock_keys: StockKeyConfig[];
  source_incarnation: string;
}

export interface Manifest {
  source_topic: string;
  config: NamespaceConfig;
}

/** What `source-create --config FILE` accepts: the rest comes from flags and the broker. */
export interface ConfigFile {
  ledger_origin: string;
  stock_keys: StockKeyConfig[];
  schema_version: 1;
}

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
const amountLimit = 1e12;
const partitionsMax = 10_000;

type Problems = string[];

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkMembers(obj: Record<string, unknown>, allowed: readonly string[], where: string, problems: Problems) {
  for (const name of Object.keys(obj)) {
    if (!allowed.includes(name))
      problems.push(`${where === '' ? '' : `${where}: `}unknown member ${JSON.stringify(name)}`);
  }
}

function checkInteger(v: unknown, where: string, min: number, max: number, problems: Problems) {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    problems.push(`${where} must be an integer`);
  } else if (v < min || v > max) {
    problems.push(`${where} must be within [${min}, ${max}], got ${v}`);
  }
}

export function validNamespace(ns: string): boolean {
  return namespacePattern.test(ns);
}

export function validTopicName(topic: string): boolean {
  return topicPattern.test(topic) && topic !== '.' && topic !== '..';
}

function checkStockKeys(v: unknown, partitions: number | undefined, problems: Problems) {
  if (!Array.isArray(v)) {
    problems.push('stock_keys must be an array');
    return;
  }
  const seen = new Set<string>();
  v.forEach((entry, i) => {
    const where = `stock_keys[${i}]`;
    if (!isPlainObject(entry)) {
      problems.push(`${where} must be an object`);
      return;
    }
    checkMembers(entry, ['item', 'location', 'partition', 'opening', 'threshold'], where, problems);
    for (const field of ['item', 'location'] as const) {
      if (!isTextField(entry[field])) {
        problems.push(`${where}.${field} must be a string of 1-64 characters without control characters`);
      }
    }
    if (typeof entry.item === 'string' && typeof entry.location === 'string') {
      const id = JSON.stringify([entry.item, entry.location]);
      if (seen.has(id)) problems.push(`${where}: duplicate stock key (${entry.item}, ${entry.location})`);
      seen.add(id);
    }
    if (partitions === undefined) {
      checkInteger(entry.partition, `${where}.partition`, 0, partitionsMax - 1, problems);
    } else {
      checkInteger(entry.partition, `${where}.partition`, 0, partitions - 1, problems);
    }
    checkInteger(entry.opening, `${where}.opening`, -amountLimit, amountLimit, problems);
    checkInteger(entry.threshold, `${where}.threshold`, -amountLimit, amountLimit, problems);
  });
}

function report(problems: Problems, what: string): never {
  throw invalidInput(`${what}: ${problems.join('; ')}`);
}

/** Validates a complete namespace configuration (docs/design.md#configuration). */
export function parseNamespaceConfig(value: unknown, what = 'config'): NamespaceConfig {
  const problems: Problems = [];
  if (!isPlainObject(value)) report(['must be a JSON object'], what);
  checkMembers(
    value,
    ['namespace', 'schema_version', 'ledger_origin', 'partitions', 'stock_keys', 'source_incarnation'],
    '', // report() names `what` once
    problems,
  );
  if (typeof value.namespace !== 'string' || !validNamespace(value.namespace)) {
    problems.push('namespace must match [a-z0-9][a-z0-9-]{0,62}');
  }
  if (value.schema_version !== 1) problems.push('schema_version must be 1');
  if (typeof value.ledger_origin !== 'string' || !isCalendarDate(value.ledger_origin)) {
    problems.push('ledger_origin must be a real calendar date YYYY-MM-DD');
  }
  checkInteger(value.partitions, 'partitions', 1, partitionsMax, problems);
  const partitions =
    typeof value.partitions === 'number' && Number.isSafeInteger(value.partitions) ? value.partitions : undefined;
  checkStockKeys(value.stock_keys, partitions, problems);
  if (typeof value.source_incarnation !== 'string' || !incarnationPattern.test(value.source_incarnation)) {
    problems.push('source_incarnation must be "kafka:" followed by 32 lowercase hex digits');
  }
  if (problems.length > 0) report(problems, what);
  return value as unknown as NamespaceConfig;
}

/** Validates the `--config FILE` object of source-create, before any topic exists. */
export function parseConfigFile(value: unknown, partitions: number, what = 'config file'): ConfigFile {
  const problems: Problems = [];
  if (!isPlainObject(value)) report(['must be a JSON object'], what);
  checkMembers(value, ['ledger_origin', 'stock_keys', 'schema_version'], '', problems);
  if (value.schema_version !== undefined && value.schema_version !== 1) problems.push('schema_version must be 1');
  if (typeof value.ledger_origin !== 'string' || !isCalendarDate(value.ledger_origin)) {
    problems.push('ledger_origin must be a real calendar date YYYY-MM-DD');
  }
  checkStockKeys(value.stock_keys, partitions, problems);
  if (problems.length > 0) report(problems, what);
  return {
    schema_version: 1,
    ledger_origin: value.ledger_origin as string,
    stock_keys: value.stock_keys as StockKeyConfig[],
  };
}

export function parseManifest(value: unknown, what = 'manifest'): Manifest {
  if (!isPlainObject(value)) report(['must be a JSON object'], what);
  const problems: Problems = [];
  checkMembers(value, ['source_topic', 'config'], '', problems);
  if (typeof value.source_topic !== 'string' || !validTopicName(value.source_topic)) {
    problems.push('source_topic must be a legal Kafka topic name');
  }
  if (problems.length > 0) report(problems, what);
  const config = parseNamespaceConfig(value.config, `${what}: config`);
  return { source_topic: value.source_topic as string, config };
}

/** Lowercase hex SHA-256 of the UTF-8 canonical JSON of the configuration (docs/design.md#configuration). */
export function configDigest(config: NamespaceConfig): string {
  return createHash('sha256').update(canonicalJson(config), 'utf8').digest('hex');
}

/** The stock key's configuration, or undefined when (item, location) is not configured. */
export function stockKeyIndex(config: NamespaceConfig): Map<string, StockKeyConfig> {
  return new Map(config.stock_keys.map((k) => [stockKeyId(k.item, k.location), k]));
}

/** A collision-free map key for (item, location). */
export function stockKeyId(item: string, location: string): string {
  return JSON.stringify([item, location]);
}
