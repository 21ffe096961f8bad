/**
 * What `config-revise` may change (docs/design.md#configuration-revisions), pure: the caller
 * reads which keys have decisions. A key with authority (an APPLIED decision) keeps its terms
 * for ever, since they are part of every closing already published:
 * - a revision that lists such a key with other terms is refused, naming the key;
 * - a revision that changes or drops the default rule, or drops a listed key, keeps each such
 *   key's terms by listing it as an override of its own ("pinned").
 * Every other key may gain, change or lose terms: nothing was decided on them.
 */
import { invalidInput } from '../kernel/amends-error.js';
import {
  type ConfigFile,
  type NamespaceConfig,
  parseNamespaceConfig,
  type StockKeyConfig,
  type StockKeyOverride,
  stockKeyId,
} from './config.js';
import { fixedMembers, type RevisionChain } from './config-revision.js';
import { type StockKeyTerms, stockKeyTerms } from './stock-key-terms.js';

export interface KeyRef {
  item: string;
  location: string;
}

/** The keys whose terms a revision may change: listed ones that differ, and all when the default differs. */
export interface ChangedTerms {
  listed: KeyRef[];
  defaultChanged: boolean;
}

/** The next revision's configuration from a config file: revision 1's fixed members, the file's rules. */
export function revisedConfig(chain: RevisionChain, file: ConfigFile, what: string): NamespaceConfig {
  const { namespace, partitions, source_incarnation } = chain.base;
  const config = parseNamespaceConfig({ namespace, ...file, partitions, source_incarnation }, what);
  const problems = fixedMembers(chain.base, config);
  if (problems.length > 0) throw invalidInput(`${what}: ${problems.join('; ')}`);
  // Whether it changes anything is refuseNoEffect's to say, once the decided keys are pinned.
  return config;
}

export function changedTerms(previous: NamespaceConfig, next: NamespaceConfig): ChangedTerms {
  const listed = new Map<string, KeyRef>();
  for (const k of [...previous.stock_keys, ...next.stock_keys]) {
    const before = stockKeyTerms(previous, k.item, k.location);
    const after = stockKeyTerms(next, k.item, k.location);
    if (!sameTerms(before, after)) listed.set(stockKeyId(k.item, k.location), { item: k.item, location: k.location });
  }
  return { listed: [...listed.values()], defaultChanged: !sameRule(defaultRule(previous), defaultRule(next)) };
}

/**
 * `next` with each decided key whose terms it would change pinned to its terms under
 * `previous`; refused when `next` lists such a key itself. `decided` may hold more keys than
 * those (any key with authority); each key at most once.
 */
export function pinDecided(
  previous: NamespaceConfig,
  next: NamespaceConfig,
  decided: readonly KeyRef[],
): { config: NamespaceConfig; pinned: KeyRef[] } {
  const listed = new Set(next.stock_keys.map((k) => stockKeyId(k.item, k.location)));
  const problems: string[] = [];
  const pins: (StockKeyConfig | StockKeyOverride)[] = [];
  for (const key of decided) {
    const before = stockKeyTerms(previous, key.item, key.location);
    const after = stockKeyTerms(next, key.item, key.location);
    if (sameTerms(before, after)) continue;
    const name = `${JSON.stringify(key.item)}@${JSON.stringify(key.location)}`;
    if (before === undefined) problems.push(`${name} has decisions but no terms in the revision in force`);
    else if (listed.has(stockKeyId(key.item, key.location))) {
      problems.push(
        `${name} already has decisions under ${describeTerms(before)}; a revision cannot give it ${describeTerms(after)}`,
      );
    } else pins.push(pinOf(next, before));
  }
  if (problems.length > 0) throw invalidInput(`config-revise: ${problems.join('; ')}`);
  const config = { ...next, stock_keys: [...next.stock_keys, ...pins] } as NamespaceConfig;
  return { config, pinned: pins.map(({ item, location }) => ({ item, location })) };
}

/**
 * Refuses a revision that, pins included, gives every key the terms it has now: only keys
 * reordered, a decided key dropped and pinned back, a null default for an absent one.
 */
export function refuseNoEffect(previous: NamespaceConfig, revised: NamespaceConfig, pinned: number, what: string) {
  const effect = changedTerms(previous, revised);
  if (effect.listed.length > 0 || effect.defaultChanged) return;
  const keys = pinned === 1 ? 'key' : 'keys';
  const kept = pinned === 0 ? '' : ` (with the ${pinned} decided ${keys} it would change kept as they are)`;
  throw invalidInput(`${what}: it gives every key the terms it has now${kept}; a revision must change something`);
}

function pinOf(config: NamespaceConfig, t: StockKeyTerms): StockKeyConfig | StockKeyOverride {
  const { item, location, opening, threshold } = t;
  const table = config.schema_version === 1 || config.partitioner === 'table';
  return table
    ? { item, location, partition: t.partition, opening, threshold }
    : { item, location, opening, threshold };
}

function defaultRule(config: NamespaceConfig): { opening: number; threshold: number } | undefined {
  if (config.schema_version === 1 || config.partitioner === 'table') return undefined;
  return config.default_stock_key ?? undefined;
}

function sameRule(a: { opening: number; threshold: number } | undefined, b: typeof a): boolean {
  return a === b || (a !== undefined && b !== undefined && a.opening === b.opening && a.threshold === b.threshold);
}

function sameTerms(a: StockKeyTerms | undefined, b: StockKeyTerms | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.partition === b.partition && a.opening === b.opening && a.threshold === b.threshold;
}

function describeTerms(t: StockKeyTerms | undefined): string {
  if (t === undefined) return 'no terms (UNKNOWN_KEY)';
  return `partition ${t.partition}, opening ${t.opening}, threshold ${t.threshold}`;
}
