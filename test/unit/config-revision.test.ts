/**
 * Configuration revisions (docs/design.md#configuration-revisions), config-revision.ts: which
 * revision is in force at a (partition, offset), the digests that chain revisions, and
 * parseRevisions' refusals, one clause each naming what is wrong. What a revision may change
 * (revision-rules.ts) is revision-rules.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { configDigest, type Murmur2ConfigV2, type NamespaceConfig, parseManifest } from '../../src/domain/config.js';
import {
  baseChain,
  type ConfigRevision,
  configAt,
  fixedMembers,
  latestConfig,
  latestRevision,
  parseRevisions,
  revisionAt,
  revisionDigest,
} from '../../src/domain/config-revision.js';
import {
  chain,
  chainOf,
  murmurBase,
  refusal,
  rev2Config,
  rev2From,
  rev3Config,
  rev3From,
  tableBase,
} from './revision-test-kit.js';

/** Revision 2 with another default rule. */
const altered: Murmur2ConfigV2 = { ...rev2Config, default_stock_key: { opening: 11, threshold: 1 } };
const [rev2, rev3] = chain.revisions as [ConfigRevision, ConfigRevision];
const configs = [murmurBase, rev2Config, rev3Config];
const farOn = 1_000_000;

describe('the revision in force at (partition, offset)', () => {
  it.each([
    ['partition 0, the first offset', 0, 0, 1],
    ["partition 0, just before revision 2's position", 0, (rev2From[0] as number) - 1, 1],
    ["partition 0, at revision 2's position", 0, rev2From[0], 2],
    ["partition 0, just before revision 3's position", 0, (rev3From[0] as number) - 1, 2],
    ["partition 0, at revision 3's position", 0, rev3From[0], 3],
    ['partition 0, far on', 0, farOn, 3],
    ['partition 1, just before both positions', 1, (rev2From[1] as number) - 1, 1],
    ['partition 1, at both positions: the newest', 1, rev3From[1], 3],
    ['partition 1, just after', 1, (rev3From[1] as number) + 1, 3],
  ])('%s (%i, %i): revision %i', (_, partition, offset, revision) => {
    expect(revisionAt(chain, partition as number, offset as number)).toBe(revision);
    expect(configAt(chain, partition as number, offset as number)).toBe(configs[(revision as number) - 1]);
  });

  it('is revision 1 everywhere on a chain nobody revised', () => {
    const alone = baseChain(murmurBase);
    for (const [partition, offset] of [
      [0, 0],
      [1, farOn],
    ] as const) {
      expect(revisionAt(alone, partition, offset)).toBe(1);
      expect(configAt(alone, partition, offset)).toBe(murmurBase);
    }
    expect([latestRevision(alone), latestConfig(alone)]).toEqual([1, murmurBase]);
  });

  it('knows the newest revision, from which the next one starts', () => {
    expect([latestRevision(chain), latestConfig(chain)]).toEqual([3, rev3Config]);
  });
});

describe('digests chain the revisions', () => {
  it("revision 1's digest is its configuration's; each later one covers the one before", () => {
    const base = configDigest(murmurBase);
    expect(rev2.digest).toBe(revisionDigest(2, rev2From, rev2Config, base));
    expect(rev3.digest).toBe(revisionDigest(3, rev3From, rev3Config, rev2.digest));
  });

  it.each([
    ['its number', () => revisionDigest(3, rev2From, rev2Config, configDigest(murmurBase))],
    ['a position', () => revisionDigest(2, [3, 6], rev2Config, configDigest(murmurBase))],
    ['its configuration', () => revisionDigest(2, rev2From, rev3Config, configDigest(murmurBase))],
    ["the previous revision's digest", () => revisionDigest(2, rev2From, rev2Config, rev3.digest)],
  ])('changes with %s', (_, digest) => {
    expect(digest()).not.toBe(rev2.digest);
  });

  it.each([
    ["revision 2's position", chainOf(murmurBase, [[3, 4], rev2Config], [rev3From, rev3Config])],
    ["revision 2's configuration", chainOf(murmurBase, [rev2From, altered], [rev3From, rev3Config])],
    ['revision 1', chainOf({ ...murmurBase, stock_keys: [] }, [rev2From, rev2Config], [rev3From, rev3Config])],
  ])('changes every later digest when %s changes', (_, other) => {
    expect(other.revisions[1]?.digest).not.toBe(rev3.digest);
  });

  it('reads a chain back from its JSON, as a manifest or the store gives it', () => {
    expect(parseRevisions(JSON.parse(JSON.stringify(chain.revisions)), murmurBase)).toEqual(chain.revisions);
    const manifest = { source_topic: 'amends-src', config: murmurBase, revisions: chain.revisions };
    expect(parseManifest(JSON.parse(JSON.stringify(manifest))).revisions).toEqual(chain.revisions);
  });
});

/** A revision entry as written, its digest chained to `previous` (the digest is right unless said). */
function entry(revision: number, from: number[], config: unknown, previous: string) {
  return { revision, from, config, digest: revisionDigest(revision, from, config as NamespaceConfig, previous) };
}

const firstDigest = configDigest(murmurBase);

describe('parseRevisions refuses a broken chain, naming what is wrong', () => {
  const moved = entry(2, [3, 4], rev2Config, firstDigest);
  const { namespace, source_incarnation: incarnation } = murmurBase;
  const otherIncarnation = `kafka:${'cd'.repeat(16)}`;
  const fixedCases: [string, Partial<NamespaceConfig>, string][] = [
    ['the partition count', { partitions: 3 }, 'partitions must stay 2, got 3'],
    ['the namespace', { namespace: 'other-ns' }, `namespace must stay "${namespace}", got "other-ns"`],
    [
      'the incarnation',
      { source_incarnation: otherIncarnation },
      `source_incarnation must stay "${incarnation}", got "${otherIncarnation}"`,
    ],
    ['the ledger origin', { ledger_origin: '2026-04-01' }, 'ledger_origin must stay "2026-03-01", got "2026-04-01"'],
  ];

  it.each([
    [
      "a revision's configuration changed under its digest",
      [{ ...rev2, config: altered }, rev3],
      `revisions[0]: digest must be ${revisionDigest(2, rev2From, altered, firstDigest)} (the chain's SHA-256), got ${rev2.digest}`,
    ],
    [
      'a later revision once an earlier one changed',
      [moved, rev3],
      `revisions[1]: digest must be ${revisionDigest(3, rev3From, rev3Config, moved.digest)} (the chain's SHA-256), got ${rev3.digest}`,
    ],
    ['a revision left out', [rev3], 'revisions[0]: revision must be 2'],
    ['revisions out of order', [rev3, rev2], 'revisions[0]: revision must be 2'],
    [
      "a position below the previous revision's",
      [rev2, entry(3, [2, 5], rev3Config, rev2.digest)],
      "revisions[1]: from[0] is 2, below revision 2's 3",
    ],
    [
      'a position missing',
      [entry(2, [3], rev2Config, firstDigest)],
      'revisions[0]: from must list one offset ≥ 0 per partition (2)',
    ],
    [
      'a negative position',
      [entry(2, [3, -1], rev2Config, firstDigest)],
      'revisions[0]: from must list one offset ≥ 0 per partition (2)',
    ],
  ])('%s', (_, entries, message) => {
    expect(refusal(() => parseRevisions(JSON.parse(JSON.stringify(entries)), murmurBase))).toBe(message);
  });

  it.each(fixedCases)('a revision that changes %s', (_, change, message) => {
    const entries = [entry(2, rev2From, { ...rev2Config, ...change }, firstDigest)];
    expect(refusal(() => parseRevisions(entries, murmurBase))).toBe(`revisions[0]: ${message}`);
  });

  it('a revision that changes the partitioner', () => {
    const entries = [entry(2, rev2From, tableBase, firstDigest)];
    expect(refusal(() => parseRevisions(entries, murmurBase))).toBe(
      'revisions[0]: the partitioner must stay murmur2, got table',
    );
  });

  it("names the manifest's revisions in a manifest", () => {
    const manifest = { source_topic: 'amends-src', config: murmurBase, revisions: [rev3] };
    expect(refusal(() => parseManifest(manifest))).toBe('manifest: revisions[0]: revision must be 2');
  });

  it('takes version 1 as the table partitioner: a version 2 table may revise it', () => {
    const v1 = { ...tableBase, schema_version: 1 } as unknown as NamespaceConfig;
    expect(fixedMembers(v1, tableBase)).toEqual([]);
    expect(fixedMembers(v1, murmurBase)).toEqual(['the partitioner must stay table, got murmur2']);
  });
});
