/**
 * Configuration version 2 (docs/design.md#configuration): version 1 stays byte for byte what it
 * was; version 2's partitioner and default rule are accepted; every refusal is one clause.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configDigest, parseConfigFile, parseManifest, parseNamespaceConfig } from '../../src/domain/config.js';
import { manifestText } from '../../src/domain/manifest-text.js';
import { fixture } from './worked-example-kit.js';

const base = { namespace: 'cfg-test', partitions: 3, source_incarnation: `kafka:${'0f3c'.repeat(8)}` };
const v2 = {
  ...base,
  schema_version: 2,
  ledger_origin: '2026-03-01',
  partitioner: 'murmur2',
  default_stock_key: { opening: 0, threshold: 0 },
  stock_keys: [{ item: 'widget', location: 'berlin', opening: 100, threshold: 20 }],
};

/** The one-line refusal of `value`, without the `config: ` prefix. */
function refusal(value: unknown): string {
  try {
    parseNamespaceConfig(value);
  } catch (error) {
    return (error as Error).message.replace(/^config: /, '');
  }
  throw new Error('accepted');
}

describe('configuration version 1 is unchanged', () => {
  it('two-keys.config.json gives the digest it always gave (sha256 of this canonical JSON)', () => {
    const config = parseNamespaceConfig({
      namespace: 'fixture-ns',
      partitions: 2,
      source_incarnation: `kafka:${'0f3c'.repeat(8)}`,
      ...parseConfigFile(JSON.parse(fixture('two-keys.config.json')), 2),
    });
    const canonical =
      '{"ledger_origin":"2026-03-01","namespace":"fixture-ns","partitions":2,"schema_version":1,' +
      '"source_incarnation":"kafka:0f3c0f3c0f3c0f3c0f3c0f3c0f3c0f3c","stock_keys":[' +
      '{"item":"widget","location":"berlin","opening":100,"partition":0,"threshold":20},' +
      '{"item":"gadget","location":"paris","opening":50,"partition":1,"threshold":10}]}';
    expect(createHash('sha256').update(canonical).digest('hex')).toBe(
      'eee40685a9231eb81552fe84a4c6728b3d63256d47111cc92e064cc1dbdc5fd5',
    );
    expect(configDigest(config)).toBe('eee40685a9231eb81552fe84a4c6728b3d63256d47111cc92e064cc1dbdc5fd5');
    const text = manifestText({ source_topic: 't', config });
    expect(text).not.toContain('partitioner');
    expect(text).not.toContain('default_stock_key');
  });

  it("refuses version 2's members in version 1", () => {
    expect(refusal({ ...v2, schema_version: 1, stock_keys: [] })).toBe(
      'unknown member "partitioner"; unknown member "default_stock_key"',
    );
  });

  it('refuses other versions once, not member by member', () => {
    expect(refusal({ ...v2, schema_version: 3 })).toBe('schema_version must be 1 or 2');
  });
});

describe('configuration version 2', () => {
  it('accepts murmur2 with a default rule and overrides, and prints it in order, as written', () => {
    const config = parseNamespaceConfig(v2);
    expect(config).toEqual(v2);
    const text = manifestText({ source_topic: 'amends-src', config });
    expect(Object.keys(JSON.parse(text).config)).toEqual([
      'namespace',
      'schema_version',
      'ledger_origin',
      'partitions',
      'partitioner',
      'default_stock_key',
      'stock_keys',
      'source_incarnation',
    ]);
    // Printed and read back, the digest is the same.
    expect(configDigest(parseManifest(JSON.parse(text)).config)).toBe(configDigest(config));
  });

  it('accepts murmur2 with no default rule (absent or null) and the table with partitions', () => {
    const { default_stock_key: _, ...noRule } = v2;
    expect(parseNamespaceConfig(noRule)).toEqual(noRule);
    expect(parseNamespaceConfig({ ...v2, default_stock_key: null }).schema_version).toBe(2);
    const table = {
      ...noRule,
      partitioner: 'table',
      stock_keys: [{ item: 'widget', location: 'berlin', partition: 2, opening: 1, threshold: 0 }],
    };
    expect(parseNamespaceConfig(table)).toEqual(table);
  });

  it.each([
    [{ partitioner: undefined }, 'partitioner must be "table" or "murmur2"'],
    [{ partitioner: 'crc32' }, 'partitioner must be "table" or "murmur2"'],
    [
      { partitioner: 'table', stock_keys: [] },
      'default_stock_key needs partitioner "murmur2": a table routes only the keys it lists, so it cannot route a default key',
    ],
    [
      { stock_keys: [{ item: 'widget', location: 'berlin', partition: 0, opening: 1, threshold: 0 }] },
      'stock_keys[0].partition is not allowed with partitioner "murmur2": the partitioner gives every key\'s partition',
    ],
    [
      {
        partitioner: 'table',
        default_stock_key: null,
        stock_keys: [{ item: 'w', location: 'b', opening: 1, threshold: 0 }],
      },
      'stock_keys[0].partition must be an integer',
    ],
    [
      {
        partitioner: 'table',
        default_stock_key: null,
        stock_keys: [{ item: 'w', location: 'b', partition: 3, opening: 1, threshold: 0 }],
      },
      'stock_keys[0].partition must be within [0, 2], got 3',
    ],
    [{ default_stock_key: 5 }, 'default_stock_key must be null or an object {opening, threshold}'],
    [
      { default_stock_key: { opening: 0, threshold: 0, partition: 1 } },
      'default_stock_key: unknown member "partition"',
    ],
    [
      { default_stock_key: { opening: 1e13, threshold: 0.5 } },
      'default_stock_key.opening must be within [-1000000000000, 1000000000000], got 10000000000000; default_stock_key.threshold must be an integer',
    ],
    [{ default_stock_key: { opening: 0 } }, 'default_stock_key.threshold must be an integer'],
    [{ extra: true }, 'unknown member "extra"'],
  ])('refuses %j: %s', (change, message) => {
    expect(refusal({ ...v2, ...change })).toBe(message);
  });

  it('names every problem at once, one clause each', () => {
    const bad = { ...v2, partitioner: 'table', stock_keys: [{ item: '', location: 'b', opening: 1, threshold: 0 }] };
    expect(refusal(bad).split('; ')).toEqual([
      'default_stock_key needs partitioner "murmur2": a table routes only the keys it lists, so it cannot route a default key',
      'stock_keys[0].item must be a string of 1-64 characters without control characters',
      'stock_keys[0].partition must be an integer',
    ]);
  });
});

describe("source-create's config file, version 2", () => {
  it('accepts fixtures/any-key.config.json and keeps its members as written', () => {
    const file = parseConfigFile(JSON.parse(fixture('any-key.config.json')), 3);
    expect(file).toEqual({
      schema_version: 2,
      ledger_origin: '2026-03-01',
      partitioner: 'murmur2',
      default_stock_key: { opening: 0, threshold: 0 },
      stock_keys: [],
    });
    expect(parseNamespaceConfig({ ...base, ...file }).schema_version).toBe(2);
  });

  it('refuses what the manifest refuses, and checks a table against the partition count', () => {
    const w = { item: 'w', location: 'b', partition: 2, opening: 0, threshold: 0 };
    expect(() =>
      parseConfigFile({ schema_version: 2, ledger_origin: '2026-03-01', partitioner: 'table', stock_keys: [w] }, 3),
    ).not.toThrow();
    expect(() =>
      parseConfigFile(
        {
          schema_version: 2,
          ledger_origin: '2026-03-01',
          partitioner: 'table',
          stock_keys: [{ item: 'w', location: 'b', partition: 3, opening: 0, threshold: 0 }],
        },
        3,
      ),
    ).toThrow('config file: stock_keys[0].partition must be within [0, 2], got 3');
    expect(() => parseConfigFile({ ledger_origin: '2026-03-01', stock_keys: [], partitioner: 'murmur2' }, 3)).toThrow(
      'config file: unknown member "partitioner"',
    );
  });
});
