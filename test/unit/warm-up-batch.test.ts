import { describe, expect, it } from 'vitest';
import { parseNamespaceConfig } from '../../src/domain/config.js';
import { decideBatch } from '../../src/domain/decide.js';
import { warmUpBatch, warmUpRecordsMax } from '../../src/io/store/warm-up-batch.js';

const config = parseNamespaceConfig({
  namespace: 'warm-ns',
  schema_version: 1,
  ledger_origin: '2026-03-01',
  partitions: 2,
  stock_keys: [{ item: 'gadget', location: 'paris', partition: 1, opening: 0, threshold: 5 }],
  source_incarnation: `kafka:${'ab'.repeat(16)}`,
});

describe('the store warm-up batch', () => {
  it('exercises what a busy batch does: applied posts and corrections, a duplicate, a quarantined value', () => {
    const records = warmUpBatch(config, warmUpRecordsMax);
    expect(records).toHaveLength(warmUpRecordsMax);
    expect(new Set(records.map((r) => r.partition))).toEqual(new Set([1]));
    expect(records.map((r) => r.offset)).toEqual(records.map((_, i) => i));
    const results = decideBatch(records, config, new Map());
    const outcomes = new Map<string, number>();
    for (const r of results) outcomes.set(r.decision.outcome, (outcomes.get(r.decision.outcome) ?? 0) + 1);
    // 400 new posts and 49 corrections applied, 50 redeliveries, one value that is no envelope.
    expect(Object.fromEntries(outcomes)).toEqual({ APPLIED: 449, DUPLICATE: 50, SCHEMA: 1 });
    const days = new Set(results.flatMap((r) => r.newVersions.map((v) => v.day)));
    expect(days.size).toBe(warmUpRecordsMax / 25);
  });

  it('is capped at its limit and empty without a stock key', () => {
    expect(warmUpBatch(config, 10_000)).toHaveLength(warmUpRecordsMax);
    expect(warmUpBatch(config, 3)).toHaveLength(3);
    expect(warmUpBatch({ ...config, stock_keys: [] }, 10)).toEqual([]);
  });

  it('under a default rule with no key listed, warms on a key of its own that the rule accepts', () => {
    const anyKey = parseNamespaceConfig({
      ...config,
      schema_version: 2,
      partitioner: 'murmur2',
      default_stock_key: { opening: 0, threshold: 0 },
      stock_keys: [],
    });
    const results = decideBatch(warmUpBatch(anyKey, 50), anyKey, new Map());
    const outcomes = new Set(results.map((r) => r.decision.outcome));
    expect(outcomes).toEqual(new Set(['APPLIED', 'DUPLICATE', 'SCHEMA']));
  });
});
