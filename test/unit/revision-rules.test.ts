/**
 * What a configuration revision may change (docs/design.md#configuration-revisions),
 * revision-rules.ts: the next revision from a config file, which listed keys' terms and whether
 * the default rule a revision changes, and how a key with decisions keeps its terms: refused,
 * naming it, when the revision lists it with others; pinned to its old terms when the revision
 * changes or drops the default rule or drops it from the list.
 */
import { describe, expect, it } from 'vitest';
import {
  configDigest,
  type Murmur2ConfigV2,
  type NamespaceConfig,
  type StockKeyConfig,
  type TableConfigV2,
} from '../../src/domain/config.js';
import { baseChain } from '../../src/domain/config-revision.js';
import { murmur2Partition } from '../../src/domain/murmur2.js';
import { changedTerms, pinDecided, refuseNoEffect, revisedConfig } from '../../src/domain/revision-rules.js';
import { canonicalKeyBytes, stockKeyTerms } from '../../src/domain/stock-key-terms.js';
import { chain, fileOf, murmurBase, refusal, rev2Config, rev3Config, tableBase } from './revision-test-kit.js';

const widget = { item: 'widget', location: 'berlin' };
const gadget = { item: 'gadget', location: 'paris' };
const bolt = { item: 'bolt', location: 'berlin' };
const ghost = { item: 'ghost', location: 'nowhere' };
const what = 'config file next.json';
const widgetPartition = murmur2Partition(canonicalKeyBytes(widget.item, widget.location), murmurBase.partitions);

describe('revisedConfig: the next revision from a config file', () => {
  it("takes the file's rules and revision 1's namespace, partitions and incarnation", () => {
    expect(configDigest(revisedConfig(chain, fileOf(rev2Config), what))).toBe(configDigest(rev2Config));
  });

  it('refuses, with refuseNoEffect, a file identical to the newest revision', () => {
    const nothing = `${what}: it gives every key the terms it has now; a revision must change something`;
    expect(refusal(() => refuseNoEffect(rev3Config, revisedConfig(chain, fileOf(rev3Config), what), 0, what))).toBe(
      nothing,
    );
    const alone = baseChain(murmurBase);
    expect(refusal(() => refuseNoEffect(murmurBase, revisedConfig(alone, fileOf(murmurBase), what), 0, what))).toBe(
      nothing,
    );
  });

  it('takes a file identical to an older revision: it changes the newest', () => {
    expect(configDigest(revisedConfig(chain, fileOf(murmurBase), what))).toBe(configDigest(murmurBase));
  });

  it.each([
    [
      'the ledger origin',
      { ...fileOf(rev3Config), ledger_origin: '2026-04-01' },
      'ledger_origin must stay "2026-03-01", got "2026-04-01"',
    ],
    ['the partitioner', fileOf(tableBase), 'the partitioner must stay murmur2, got table'],
  ])('refuses a file that changes %s', (_, file, message) => {
    expect(refusal(() => revisedConfig(chain, file, what))).toBe(`${what}: ${message}`);
  });
});

describe('pinDecided: a key with decisions keeps its terms', () => {
  it('refuses an override that changes a decided key, naming the key and both terms', () => {
    const next: Murmur2ConfigV2 = { ...murmurBase, stock_keys: [{ ...widget, opening: 100, threshold: 30 }] };
    expect(refusal(() => pinDecided(murmurBase, next, [widget]))).toBe(
      `config-revise: "widget"@"berlin" already has decisions under partition ${widgetPartition}, opening 100, threshold 20; ` +
        `a revision cannot give it partition ${widgetPartition}, opening 100, threshold 30`,
    );
  });

  it('names every decided key it refuses, in one line', () => {
    const stockKeys = [
      { ...widget, opening: 1, threshold: 20 },
      { ...gadget, opening: 1, threshold: 5 },
    ];
    const message = refusal(() => pinDecided(murmurBase, { ...murmurBase, stock_keys: stockKeys }, [widget, gadget]));
    expect(message.split('; ').filter((clause) => clause.includes('already has decisions'))).toEqual([
      expect.stringContaining('"widget"@"berlin"'),
      expect.stringContaining('"gadget"@"paris"'),
    ]);
  });

  it('refuses a table revision that moves a decided key to another partition', () => {
    const [listed, other] = tableBase.stock_keys as [StockKeyConfig, StockKeyConfig];
    const next: TableConfigV2 = { ...tableBase, stock_keys: [{ ...listed, partition: 1 }, other] };
    expect(refusal(() => pinDecided(tableBase, next, [widget]))).toBe(
      'config-revise: "widget"@"berlin" already has decisions under partition 0, opening 100, threshold 20; ' +
        'a revision cannot give it partition 1, opening 100, threshold 20',
    );
  });

  it('refuses terms for a decided key the revision in force gives none', () => {
    const next: TableConfigV2 = { ...tableBase, stock_keys: [{ ...ghost, partition: 0, opening: 1, threshold: 0 }] };
    expect(refusal(() => pinDecided(tableBase, next, [ghost]))).toBe(
      'config-revise: "ghost"@"nowhere" has decisions but no terms in the revision in force',
    );
  });

  it('takes a decided key restated with the same terms', () => {
    const next: Murmur2ConfigV2 = { ...murmurBase, default_stock_key: { opening: 1, threshold: 1 } };
    expect(pinDecided(murmurBase, next, [widget])).toEqual({ config: next, pinned: [] });
  });

  it('takes any change of the keys without decisions', () => {
    const stockKeys = [
      { ...widget, opening: 1, threshold: 2 },
      { ...gadget, opening: 3, threshold: 4 },
    ];
    const next: Murmur2ConfigV2 = { ...murmurBase, default_stock_key: null, stock_keys: stockKeys };
    expect(pinDecided(murmurBase, next, [])).toEqual({ config: next, pinned: [] });
  });

  it('pins the decided keys of a default rule that changes, with their old terms', () => {
    const next: Murmur2ConfigV2 = { ...murmurBase, default_stock_key: { opening: 10, threshold: 1 } };
    const { config, pinned } = pinDecided(murmurBase, next, [widget, gadget]);
    expect(pinned).toEqual([gadget]);
    expect(config.stock_keys).toEqual([...next.stock_keys, { ...gadget, opening: 0, threshold: 5 }]);
    expect(terms(config, gadget)).toEqual(terms(murmurBase, gadget));
    // A key without decisions takes the new rule.
    expect(terms(config, bolt)).toEqual({ ...terms(murmurBase, bolt), opening: 10, threshold: 1 });
  });

  it.each([
    ['null', { ...murmurBase, default_stock_key: null }],
    ['left out', withoutRule(murmurBase)],
  ])('pins the decided keys of a default rule removed (%s), with their old terms', (_, next) => {
    const { config, pinned } = pinDecided(murmurBase, next, [gadget]);
    expect(pinned).toEqual([gadget]);
    expect(terms(config, gadget)).toEqual(terms(murmurBase, gadget));
    expect(terms(config, bolt)).toBeUndefined();
  });

  it('pins a decided override the revision drops to its own terms, not the default', () => {
    const next: Murmur2ConfigV2 = { ...murmurBase, stock_keys: [] };
    const made = pinDecided(murmurBase, next, [widget]);
    expect(made).toEqual({
      config: { ...next, stock_keys: [{ ...widget, opening: 100, threshold: 20 }] },
      pinned: [widget],
    });
  });

  it('pins a decided key a table revision drops, with its partition; one without decisions stays dropped', () => {
    const next: TableConfigV2 = { ...tableBase, stock_keys: [] };
    const made = pinDecided(tableBase, next, [gadget]);
    const pin = { ...gadget, partition: 1, opening: 0, threshold: 5 };
    expect(made).toEqual({ config: { ...next, stock_keys: [pin] }, pinned: [gadget] });
    expect(terms(made.config, widget)).toBeUndefined();
  });
});

describe("refuseNoEffect: a revision must change some key's terms, pins included", () => {
  it('refuses a table revision that only drops a decided key, which the pin puts back', () => {
    const gadgetOnly: TableConfigV2 = {
      ...tableBase,
      stock_keys: tableBase.stock_keys.filter((k) => k.item === 'gadget'),
    };
    const made = pinDecided(tableBase, gadgetOnly, [widget]);
    expect(made.pinned).toEqual([widget]);
    expect(refusal(() => refuseNoEffect(tableBase, made.config, made.pinned.length, what))).toBe(
      `${what}: it gives every key the terms it has now (with the 1 decided key it would change kept as they are); a revision must change something`,
    );
  });

  it('refuses keys reordered; takes a change of a key without decisions', () => {
    const reordered = { ...tableBase, stock_keys: [...tableBase.stock_keys].reverse() } as TableConfigV2;
    expect(refusal(() => refuseNoEffect(tableBase, reordered, 0, what))).toBe(
      `${what}: it gives every key the terms it has now; a revision must change something`,
    );
    const moved = {
      ...tableBase,
      stock_keys: [...tableBase.stock_keys, { ...bolt, partition: 0, opening: 1, threshold: 1 }],
    };
    expect(() => refuseNoEffect(tableBase, moved as TableConfigV2, 0, what)).not.toThrow();
  });
});

describe('changedTerms: whose terms a revision changes', () => {
  it('lists exactly the listed keys whose terms differ, old or new', () => {
    const nut = { item: 'nut', location: 'berlin' };
    const drifter = { item: 'drifter', location: 'berlin' };
    const previous = overrides([widget, 100, 20], [bolt, 1, 1], [nut, 2, 2]);
    // gadget is listed with the default's terms: no change. nut is dropped: it takes the default's.
    const next = overrides([widget, 100, 20], [bolt, 2, 1], [gadget, 0, 5], [drifter, 3, 3]);
    expect(changedTerms(previous, next)).toEqual({ listed: [bolt, nut, drifter], defaultChanged: false });
  });

  it.each([
    ['another default rule', { ...murmurBase, default_stock_key: { opening: 0, threshold: 6 } }, true],
    ['no default rule (null)', { ...murmurBase, default_stock_key: null }, true],
    ['no default rule (left out)', withoutRule(murmurBase), true],
    ['the same default rule', { ...murmurBase, stock_keys: [] }, false],
  ])('says whether the default rule changes: %s', (_, next, flagged) => {
    expect(changedTerms(murmurBase, next).defaultChanged).toBe(flagged);
  });

  it('takes null and a rule left out as the same: no default rule', () => {
    const none: Murmur2ConfigV2 = { ...murmurBase, default_stock_key: null };
    expect(changedTerms(none, withoutRule(murmurBase))).toEqual({ listed: [], defaultChanged: false });
  });

  it('lists a table key moved to another partition; a table has no default rule to change', () => {
    const [listed, other] = tableBase.stock_keys as [StockKeyConfig, StockKeyConfig];
    const next: TableConfigV2 = { ...tableBase, stock_keys: [listed, { ...other, partition: 0 }] };
    expect(changedTerms(tableBase, next)).toEqual({ listed: [gadget], defaultChanged: false });
  });
});

function terms(config: NamespaceConfig, key: { item: string; location: string }) {
  return stockKeyTerms(config, key.item, key.location);
}

function withoutRule(config: Murmur2ConfigV2): Murmur2ConfigV2 {
  const { default_stock_key: _, ...rest } = config;
  return rest;
}

/** `murmurBase` with these overrides: [key, opening, threshold]. */
function overrides(...keys: [{ item: string; location: string }, number, number][]): Murmur2ConfigV2 {
  return { ...murmurBase, stock_keys: keys.map(([key, opening, threshold]) => ({ ...key, opening, threshold })) };
}
