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

  it("drops a judged partition's days: the next partition's keys still make their versions", () => {
    const oracle = new FastOracle(testConfig);
    const versions: string[] = [];
    const collect = (v: { key: number; day: string; version: number; closing: number | null }) =>
      versions.push(`${v.key} ${v.day} v${v.version} ${v.closing}`);
    const post = { txn: 'T1', rev: 1, day: '2026-03-02', qty: 5 };
    const gadget = { ...post, item: 'gadget', location: 'paris' };
    oracle.judge(ledgerRecord(0, post), collect);
    oracle.partitionJudged(0);
    oracle.judge(ledgerRecord(1, gadget), collect);
    oracle.judge(ledgerRecord(2, { ...gadget, txn: 'T2', day: '2026-03-01', qty: 2 }), collect);
    // widget (opening 100) on partition 0; gadget (opening 0) on 1, its earlier day moving the later one.
    expect(versions).toEqual(['0 2026-03-02 v1 105', '1 2026-03-02 v1 5', '1 2026-03-01 v1 2', '1 2026-03-02 v2 7']);
  });
});
