import { describe, expect, it } from 'vitest';
import type { Murmur2ConfigV2 } from '../../src/domain/config.js';
import { baseChain, nextRevision } from '../../src/domain/config-revision.js';
import { murmur2Partition } from '../../src/domain/murmur2.js';
import { canonicalKeyBytes } from '../../src/domain/stock-key-terms.js';
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

  it('judges a ROUTING record under its own revision, whatever terms its key was decided on since', () => {
    // A real run: the misrouted record on `other` is quarantined under revision 1; config-revise
    // then changes the default rule at the frontiers; the key's first post on its own partition
    // is APPLIED under revision 2. Judging the key's own partition first must not call that a
    // change of a decided key's terms: the ROUTING record says nothing of them.
    const base: Murmur2ConfigV2 = {
      ...testConfig,
      schema_version: 2,
      partitioner: 'murmur2',
      default_stock_key: { opening: 1, threshold: 0 },
      stock_keys: [],
    };
    const revised: Murmur2ConfigV2 = { ...base, default_stock_key: { opening: 50, threshold: 0 } };
    const own = murmur2Partition(canonicalKeyBytes('ghost', 'nowhere'), base.partitions);
    const other = 1 - own;
    const from = [0, 0];
    from[other] = 1;
    const oracle = new FastOracle(base, [nextRevision(baseChain(base), from, revised)]);
    const closings: (number | null)[] = [];
    const onVersion = (v: { closing: number | null }) => closings.push(v.closing);
    const post = { item: 'ghost', location: 'nowhere', txn: 'T1', rev: 1, day: '2026-03-02', qty: 1 };
    expect(oracle.judge(ledgerRecord(0, post, own), onVersion).outcome).toBe('APPLIED');
    oracle.partitionJudged(own);
    expect(oracle.judge(ledgerRecord(0, post, other), onVersion).outcome).toBe('ROUTING');
    // Revision 2's opening 50, plus 1.
    expect(closings).toEqual([51]);
  });
});
