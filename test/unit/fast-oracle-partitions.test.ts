import { describe, expect, it } from 'vitest';
import { FastOracle } from '../../src/verify/fast-oracle.js';
import { ledgerRecord, testConfig } from './ledger-test-kit.js';

describe('the fast oracle, partition by partition', () => {
  it('drops a judged partition authority, keeps the others, and refuses a record of a dropped one', () => {
    const oracle = new FastOracle(testConfig);
    const none = () => {};
    const post = { txn: 'T1', rev: 2, day: '2026-03-02', qty: 5 };
    const gadget = { ...post, item: 'gadget', location: 'paris' };
    expect(oracle.judge(ledgerRecord(0, post), none).outcome).toBe('APPLIED');
    expect(oracle.judge(ledgerRecord(0, gadget), none).outcome).toBe('APPLIED');
    oracle.partitionJudged(0);
    // Partition 1 still knows its transaction: a lower revision is STALE, the same one DUPLICATE.
    expect(oracle.judge(ledgerRecord(1, { ...gadget, rev: 1 }), none).outcome).toBe('STALE');
    expect(oracle.judge(ledgerRecord(2, gadget), none).outcome).toBe('DUPLICATE');
    expect(() => oracle.judge(ledgerRecord(1, { ...post, rev: 1 }), none)).toThrow(
      'verify: a record of partition 0 after its end',
    );
  });
});
