/**
 * Every rule of a configuration and a manifest (docs/design.md#configuration), one refusal each,
 * with the whole one-line message (issue 35, item 7). Version 2's own rules are in
 * config-version-2.test.ts; the revision chain's in config-revision.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseConfigFile, parseManifest, parseNamespaceConfig } from '../../src/domain/config.js';

const key = { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 };
const v1 = {
  namespace: 'cfg-rules',
  schema_version: 1,
  ledger_origin: '2026-03-01',
  partitions: 2,
  stock_keys: [key],
  source_incarnation: `kafka:${'0f3c'.repeat(8)}`,
};

/** The one-line refusal of `run`. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('a version 1 configuration', () => {
  it('is accepted as written', () => {
    expect(parseNamespaceConfig(v1)).toEqual(v1);
  });

  it.each([
    [{ namespace: 'Upper' }, 'namespace must match [a-z0-9][a-z0-9-]{0,62}'],
    [{ namespace: `a${'b'.repeat(63)}` }, 'namespace must match [a-z0-9][a-z0-9-]{0,62}'],
    [{ namespace: 7 }, 'namespace must match [a-z0-9][a-z0-9-]{0,62}'],
    [{ schema_version: 3 }, 'schema_version must be 1 or 2'],
    [{ ledger_origin: '2026-02-30' }, 'ledger_origin must be a real calendar date YYYY-MM-DD'],
    [{ ledger_origin: '2026-3-1' }, 'ledger_origin must be a real calendar date YYYY-MM-DD'],
    [{ partitions: 0 }, 'partitions must be within [1, 10000], got 0'],
    [{ partitions: 1.5 }, 'partitions must be an integer'],
    [{ stock_keys: {} }, 'stock_keys must be an array'],
    [{ stock_keys: [5] }, 'stock_keys[0] must be an object'],
    [{ stock_keys: [{ ...key, colour: 'red' }] }, 'stock_keys[0]: unknown member "colour"'],
    [
      { stock_keys: [{ ...key, item: '' }] },
      'stock_keys[0].item must be a string of 1-64 characters without control characters',
    ],
    [
      { stock_keys: [{ ...key, location: 'a\u0007b' }] },
      'stock_keys[0].location must be a string of 1-64 characters without control characters',
    ],
    [{ stock_keys: [key, { ...key, partition: 1 }] }, 'stock_keys[1]: duplicate stock key (widget, berlin)'],
    [{ stock_keys: [{ ...key, partition: 2 }] }, 'stock_keys[0].partition must be within [0, 1], got 2'],
    [{ stock_keys: [{ ...key, partition: undefined }] }, 'stock_keys[0].partition must be an integer'],
    [
      { stock_keys: [{ ...key, opening: 1e12 + 1 }] },
      'stock_keys[0].opening must be within [-1000000000000, 1000000000000], got 1000000000001',
    ],
    [{ stock_keys: [{ ...key, threshold: '20' }] }, 'stock_keys[0].threshold must be an integer'],
    [{ source_incarnation: 'kafka:ABC' }, 'source_incarnation must be "kafka:" followed by 32 lowercase hex digits'],
    [{ partitioner: 'table' }, 'unknown member "partitioner"'],
  ])('refuses %j: %s', (change, message) => {
    expect(refusal(() => parseNamespaceConfig({ ...v1, ...change }))).toBe(`config: ${message}`);
  });

  it('is refused whole when it is not an object', () => {
    expect(refusal(() => parseNamespaceConfig([v1]))).toBe('config: must be a JSON object');
  });
});

describe('a manifest', () => {
  it.each([
    [{ source_topic: 'a topic' }, 'source_topic must be a legal Kafka topic name'],
    [{ source_topic: '..' }, 'source_topic must be a legal Kafka topic name'],
    [{ extra: 1 }, 'unknown member "extra"'],
  ])('refuses %j: %s', (change, message) => {
    expect(refusal(() => parseManifest({ source_topic: 'ledger', config: v1, ...change }))).toBe(
      `manifest: ${message}`,
    );
  });

  it("names the config's problems under config", () => {
    expect(refusal(() => parseManifest({ source_topic: 'ledger', config: { ...v1, partitions: 0 } }))).toBe(
      'manifest: config: partitions must be within [1, 10000], got 0',
    );
  });
});

describe("a new configuration (source-create's, source-adopt's and config-revise's --config)", () => {
  const noKey =
    'config file: stock_keys is empty and there is no default_stock_key, so every record would be UNKNOWN_KEY: list a key, or set default_stock_key (partitioner "murmur2")';

  it('must be able to decide something: an empty key list needs a default rule', () => {
    expect(refusal(() => parseConfigFile({ ledger_origin: '2026-03-01', stock_keys: [] }, 2))).toBe(noKey);
    const v2 = { schema_version: 2, ledger_origin: '2026-03-01', stock_keys: [] };
    expect(refusal(() => parseConfigFile({ ...v2, partitioner: 'table' }, 2))).toBe(noKey);
    expect(refusal(() => parseConfigFile({ ...v2, partitioner: 'murmur2' }, 2))).toBe(noKey);
    expect(refusal(() => parseConfigFile({ ...v2, partitioner: 'murmur2', default_stock_key: null }, 2))).toBe(noKey);
    const withRule = { ...v2, partitioner: 'murmur2', default_stock_key: { opening: 0, threshold: 0 } };
    expect(parseConfigFile(withRule, 2)).toEqual(withRule);
  });

  it('while a registered namespace without keys stays readable', () => {
    expect(parseNamespaceConfig({ ...v1, stock_keys: [] }).stock_keys).toEqual([]);
  });

  it.each([
    [{ namespace: 'x' }, 'unknown member "namespace"'],
    [{ ledger_origin: undefined }, 'ledger_origin must be a real calendar date YYYY-MM-DD'],
    [{ stock_keys: [{ ...key, partition: 2 }] }, 'stock_keys[0].partition must be within [0, 1], got 2'],
  ])('refuses %j: %s', (change, message) => {
    expect(refusal(() => parseConfigFile({ ledger_origin: '2026-03-01', stock_keys: [key], ...change }, 2))).toBe(
      `config file: ${message}`,
    );
  });
});
