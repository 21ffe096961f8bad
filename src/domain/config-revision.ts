/**
 * A namespace's configuration revisions (docs/design.md#configuration-revisions): revision 1 is
 * the manifest's `config`; each later revision is a whole configuration in force from a source
 * position per partition, fixed when `config-revise` appended it. The chain is short (one entry
 * per revision an operator made), so looking up the revision in force walks it.
 *
 * Identity: revision 1's digest is the configuration digest it always had; revision n's is the
 * SHA-256 of the canonical JSON of `{revision, from, config, previous}`, `previous` being
 * revision n−1's digest: a hash chain, so a revision cannot be altered or dropped unnoticed.
 */
import { createHash } from 'node:crypto';
import { invalidInput } from '../kernel/amends-error.js';
import { canonicalJson } from './canonical-json.js';
import { configDigest, type Manifest, type NamespaceConfig, parseNamespaceConfig } from './config.js';
import { isPlainObject, type Problems } from './config-rules.js';

/** A revision after the first: its configuration and where on each partition it starts. */
export interface ConfigRevision {
  /** 2, 3, …: revision 1 is the manifest's config. */
  revision: number;
  /** Per partition, the first source offset decided under this revision. */
  from: number[];
  config: NamespaceConfig;
  digest: string;
}

/** Revision 1 and every later revision in ascending order. */
export interface RevisionChain {
  base: NamespaceConfig;
  revisions: readonly ConfigRevision[];
}

/** The chain of a namespace nobody revised: revision 1 alone. */
export function baseChain(config: NamespaceConfig): RevisionChain {
  return { base: config, revisions: [] };
}

/** The number of the newest revision. */
export function latestRevision(chain: RevisionChain): number {
  return chain.revisions.length + 1;
}

/** The newest revision's configuration: what a revision made next starts from. */
export function latestConfig(chain: RevisionChain): NamespaceConfig {
  return chain.revisions[chain.revisions.length - 1]?.config ?? chain.base;
}

/** The chain a manifest carries: its `config` and any `revisions` (config-revise, manifest-recover). */
export function manifestChain(manifest: Manifest): RevisionChain {
  return { base: manifest.config, revisions: manifest.revisions ?? [] };
}

/** The newest configuration a manifest carries: its last revision's, or its own. */
export function newestConfigOf(manifest: Manifest): NamespaceConfig {
  return latestConfig(manifestChain(manifest));
}

/** The revision in force at (partition, offset): the newest whose position there is at or before it. */
export function revisionAt(chain: RevisionChain, partition: number, offset: number): number {
  for (let i = chain.revisions.length - 1; i >= 0; i--) {
    const r = chain.revisions[i] as ConfigRevision;
    if ((r.from[partition] as number) <= offset) return r.revision;
  }
  return 1;
}

/** The configuration in force at (partition, offset). */
export function configAt(chain: RevisionChain, partition: number, offset: number): NamespaceConfig {
  const revision = revisionAt(chain, partition, offset);
  return revision === 1 ? chain.base : (chain.revisions[revision - 2] as ConfigRevision).config;
}

/** Revision n's digest, chained to revision n−1's. */
export function revisionDigest(revision: number, from: readonly number[], config: NamespaceConfig, previous: string) {
  const text = canonicalJson({ revision, from: [...from], config, previous });
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The newest revision's digest: what the next one chains to. */
function latestDigest(chain: RevisionChain): string {
  return chain.revisions[chain.revisions.length - 1]?.digest ?? configDigest(chain.base);
}

/** A revision that extends `chain`, its digest computed. */
export function nextRevision(chain: RevisionChain, from: number[], config: NamespaceConfig): ConfigRevision {
  const revision = latestRevision(chain) + 1;
  return { revision, from, config, digest: revisionDigest(revision, from, config, latestDigest(chain)) };
}

/**
 * Validates revisions 2… of a chain over `base` (a manifest's `revisions`, or rows read back):
 * numbered in order, positions per partition never below the previous revision's, the same
 * namespace, incarnation, partitions, ledger origin and partitioner, and every digest chained.
 */
export function parseRevisions(value: unknown, base: NamespaceConfig, what = 'revisions'): ConfigRevision[] {
  if (!Array.isArray(value)) throw invalidInput(`${what}: must be an array`);
  const chain: ConfigRevision[] = [];
  for (const [i, entry] of value.entries()) {
    const where = `${what}[${i}]`;
    const problems: Problems = [];
    if (!isPlainObject(entry)) throw invalidInput(`${where}: must be a JSON object`);
    const config = parseNamespaceConfig(entry.config, `${where}: config`);
    const previous = { base, revisions: chain };
    const revision = latestRevision(previous) + 1;
    if (entry.revision !== revision) problems.push(`revision must be ${revision}`);
    const from = checkFrom(entry.from, base.partitions, chain[chain.length - 1], problems);
    problems.push(...fixedMembers(base, config));
    if (problems.length === 0) {
      const made = nextRevision(previous, from, config);
      if (entry.digest !== made.digest)
        problems.push(`digest must be ${made.digest} (the chain's SHA-256), got ${String(entry.digest)}`);
      else chain.push(made);
    }
    if (problems.length > 0) throw invalidInput(`${where}: ${problems.join('; ')}`);
  }
  return chain;
}

/** One offset per partition the namespace has (a revision's own `partitions` may be the very error), none below `last`'s. */
function checkFrom(value: unknown, partitions: number, last: ConfigRevision | undefined, problems: Problems): number[] {
  const ok =
    Array.isArray(value) &&
    value.length === partitions &&
    value.every((o) => typeof o === 'number' && Number.isSafeInteger(o) && o >= 0);
  if (!ok) {
    problems.push(`from must list one offset ≥ 0 per partition (${partitions})`);
    return [];
  }
  for (const [p, o] of (value as number[]).entries()) {
    const floor = last?.from[p] ?? 0;
    if (o < floor) problems.push(`from[${p}] is ${o}, below revision ${last?.revision}'s ${floor}`);
  }
  return value as number[];
}

/** What no revision may change, one clause per member that differs from revision 1. */
export function fixedMembers(base: NamespaceConfig, config: NamespaceConfig): Problems {
  const problems: Problems = [];
  for (const name of ['namespace', 'partitions', 'source_incarnation', 'ledger_origin'] as const) {
    if (config[name] !== base[name]) {
      problems.push(`${name} must stay ${JSON.stringify(base[name])}, got ${JSON.stringify(config[name])}`);
    }
  }
  if (partitionerOf(config) !== partitionerOf(base)) {
    problems.push(`the partitioner must stay ${partitionerOf(base)}, got ${partitionerOf(config)}`);
  }
  return problems;
}

/** Version 1 is the table partitioner. */
export function partitionerOf(config: NamespaceConfig): 'table' | 'murmur2' {
  return config.schema_version === 1 ? 'table' : config.partitioner;
}
