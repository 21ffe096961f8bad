/**
 * The member rules of a configuration (docs/design.md#configuration) shared by the manifest's
 * `config` and source-create's `--config FILE`: each check appends one clause per problem, so
 * a refusal names every problem at once.
 */
import { isTextField } from './text-rules.js';

export type Problems = string[];

const amountLimit = 1e12;
export const partitionsMax = 10_000;

/** Version 2's partitioners: the explicit table of version 1, or Kafka's default partitioner. */
export const partitioners = ['table', 'murmur2'] as const;
export type Partitioner = (typeof partitioners)[number];

/** Whether stock_keys entries carry a partition: a table needs one; murmur2 computes it; unknown when the partitioner is invalid. */
export type EntryPartition = 'required' | 'forbidden' | 'unknown';

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function checkMembers(
  obj: Record<string, unknown>,
  allowed: readonly string[],
  where: string,
  problems: Problems,
): void {
  for (const name of Object.keys(obj)) {
    if (!allowed.includes(name))
      problems.push(`${where === '' ? '' : `${where}: `}unknown member ${JSON.stringify(name)}`);
  }
}

export function checkInteger(v: unknown, where: string, min: number, max: number, problems: Problems): void {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    problems.push(`${where} must be an integer`);
  } else if (v < min || v > max) {
    problems.push(`${where} must be within [${min}, ${max}], got ${v}`);
  }
}

function checkTerms(entry: Record<string, unknown>, where: string, problems: Problems): void {
  checkInteger(entry.opening, `${where}.opening`, -amountLimit, amountLimit, problems);
  checkInteger(entry.threshold, `${where}.threshold`, -amountLimit, amountLimit, problems);
}

/** `stock_keys`: unique (item, location) text fields, opening and threshold, and a partition as `entryPartition` says. */
export function checkStockKeys(
  v: unknown,
  partitions: number | undefined,
  entryPartition: EntryPartition,
  problems: Problems,
): void {
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
    if (entryPartition === 'forbidden' && 'partition' in entry) {
      problems.push(
        `${where}.partition is not allowed with partitioner "murmur2": the partitioner gives every key's partition`,
      );
    } else if (entryPartition === 'required' || 'partition' in entry) {
      checkInteger(entry.partition, `${where}.partition`, 0, (partitions ?? partitionsMax) - 1, problems);
    }
    checkTerms(entry, where, problems);
  });
}

/**
 * Version 2's `partitioner` and `default_stock_key`; returns what `stock_keys` entries must say
 * of their partition.
 */
export function checkVersion2Members(value: Record<string, unknown>, problems: Problems): EntryPartition {
  const partitioner = value.partitioner;
  const known = partitioners.includes(partitioner as Partitioner);
  if (!known) problems.push('partitioner must be "table" or "murmur2"');
  const rule = value.default_stock_key;
  if (rule !== undefined && rule !== null) {
    if (!isPlainObject(rule)) {
      problems.push('default_stock_key must be null or an object {opening, threshold}');
    } else {
      checkMembers(rule, ['opening', 'threshold'], 'default_stock_key', problems);
      checkTerms(rule, 'default_stock_key', problems);
    }
    if (partitioner === 'table') {
      problems.push(
        'default_stock_key needs partitioner "murmur2": a table routes only the keys it lists, so it cannot route a default key',
      );
    }
  }
  if (!known) return 'unknown';
  return partitioner === 'table' ? 'required' : 'forbidden';
}

/** The members of version 2 beyond version 1's. */
const version2Members = ['partitioner', 'default_stock_key'];

/**
 * The members `version` (a `schema_version`, 1 or 2) allows beyond `common`, the version
 * itself, and version 2's own members; returns what `stock_keys` entries must say of their
 * partition (checkStockKeys).
 */
export function checkVersionedMembers(
  version: unknown,
  value: Record<string, unknown>,
  common: readonly string[],
  problems: Problems,
): EntryPartition {
  // An unsupported version is reported once, not again as every version-2 member.
  checkMembers(value, version === 1 ? common : [...common, ...version2Members], '', problems);
  if (version !== 1 && version !== 2) problems.push('schema_version must be 1 or 2');
  if (version === 2) return checkVersion2Members(value, problems);
  return version === 1 ? 'required' : 'unknown';
}
