/**
 * domain.md §4: for each adjacent pair of outcomes a record that would fail both checks
 * gets the earlier one; revision authority per stock key; §5 versioning rules.
 * Every history runs through the incremental engine and the oracle.
 */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/domain/decision.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { runOracle } from '../support/reference-oracle.js';
import { bytes, comparable, keyText, ledgerRecord, postText, runEngine, testConfig } from './ledger-test-kit.js';

function both(records: SourceRecord[]) {
  const engine = runEngine(testConfig, records);
  const oracle = runOracle(testConfig, records);
  expect(comparable(engine.decisions)).toEqual(comparable(oracle.decisions));
  expect(engine.versions).toEqual(oracle.versions);
  return engine;
}

function outcomesOf(records: SourceRecord[]): Outcome[] {
  return both(records).decisions.map((d) => d.outcome);
}

/** Versions as compact strings: `day vN closing status` or `day vN retracted`, with the cause offset. */
function versionsOf(records: SourceRecord[]): string[] {
  return both(records).versions.map(
    (v) =>
      `${v.item} ${v.day} v${v.version} ${v.retracted ? 'retracted' : `${v.closing} ${v.status}`} @${v.cause.offset}`,
  );
}

describe('precedence: the earlier check wins for each adjacent pair', () => {
  it('MALFORMED before SCHEMA: duplicate member and an unknown member', () => {
    const value = bytes(postText({}, ['"note":1', '"note":2']));
    expect(outcomesOf([{ partition: 0, offset: 0, key: bytes(keyText()), value }])).toEqual(['MALFORMED']);
  });

  it('SCHEMA before KEY_MISMATCH: rev 0 with a null key', () => {
    const value = bytes(postText({ rev: '0' }));
    expect(outcomesOf([{ partition: 0, offset: 0, key: null, value }])).toEqual(['SCHEMA']);
  });

  it('KEY_MISMATCH before UNKNOWN_KEY: envelope of an unconfigured key under a configured key', () => {
    const value = bytes(postText({ item: '"ghost"' }));
    expect(outcomesOf([{ partition: 0, offset: 0, key: bytes(keyText()), value }])).toEqual(['KEY_MISMATCH']);
  });

  it('UNKNOWN_KEY before ROUTING: an unconfigured key on any partition', () => {
    const records = [0, 1].map((partition) =>
      ledgerRecord(0, { txn: 'T1', rev: 1, item: 'ghost', day: '2026-03-02', qty: 1 }, partition),
    );
    expect(outcomesOf(records)).toEqual(['UNKNOWN_KEY', 'UNKNOWN_KEY']);
  });

  it('ROUTING before BEFORE_ORIGIN: a misrouted post before the origin', () => {
    expect(outcomesOf([ledgerRecord(0, { txn: 'T1', rev: 1, day: '2026-02-01', qty: 1 }, 1)])).toEqual(['ROUTING']);
  });

  it('BEFORE_ORIGIN before STALE: a lower revision dated before the origin', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 5, day: '2026-03-02', qty: 1 }),
      ledgerRecord(1, { txn: 'T1', rev: 1, day: '2026-02-28', qty: 1 }),
    ];
    expect(outcomesOf(records)).toEqual(['APPLIED', 'BEFORE_ORIGIN']);
  });

  it('STALE before DUPLICATE: the same content under a lower revision', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 2, day: '2026-03-02', qty: 1 }),
      ledgerRecord(1, { txn: 'T1', rev: 1, day: '2026-03-02', qty: 1 }),
    ];
    expect(outcomesOf(records)).toEqual(['APPLIED', 'STALE']);
  });

  it('DUPLICATE before CONFLICT: the same revision with the same (op, day, qty)', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 2, op: 'cancel' }),
      ledgerRecord(1, { txn: 'T1', rev: 2, op: 'cancel' }),
      ledgerRecord(2, { txn: 'T2', rev: 1, day: '2026-03-02', qty: 1 }),
      ledgerRecord(3, { txn: 'T2', rev: 1, day: '2026-03-02', qty: 1 }),
    ];
    expect(outcomesOf(records)).toEqual(['APPLIED', 'DUPLICATE', 'APPLIED', 'DUPLICATE']);
  });

  it('CONFLICT before APPLIED: the same revision with other content changes nothing', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 1, day: '2026-03-02', qty: -30 }),
      ledgerRecord(1, { txn: 'T1', rev: 1, day: '2026-03-02', qty: -31 }),
      ledgerRecord(2, { txn: 'T1', rev: 1, day: '2026-03-03', qty: -30 }),
      ledgerRecord(3, { txn: 'T1', rev: 1, op: 'cancel' }),
      ledgerRecord(4, { txn: 'T1', rev: 1, day: '2026-03-02', qty: -30 }),
    ];
    expect(outcomesOf(records)).toEqual(['APPLIED', 'CONFLICT', 'CONFLICT', 'CONFLICT', 'DUPLICATE']);
    expect(versionsOf(records)).toEqual(['widget 2026-03-02 v1 70 OK @0']);
  });

  it('BEFORE_ORIGIN applies to posts only: a cancel carries no day', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 1, day: '2026-02-28', qty: 5 }),
      ledgerRecord(1, { txn: 'T1', rev: 2, op: 'cancel' }),
      ledgerRecord(2, { txn: 'T1', rev: 3, day: '2026-03-01', qty: 5 }),
    ];
    expect(outcomesOf(records)).toEqual(['BEFORE_ORIGIN', 'APPLIED', 'APPLIED']);
    expect(versionsOf(records)).toEqual(['widget 2026-03-01 v1 105 OK @2']);
  });
});

describe('revision authority (per stock key)', () => {
  it('accepts a first revision other than 1', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 7, day: '2026-03-02', qty: -5 }),
      ledgerRecord(1, { txn: 'T1', rev: 7, day: '2026-03-02', qty: -5 }),
      ledgerRecord(2, { txn: 'T1', rev: 3, day: '2026-03-02', qty: -9 }),
      ledgerRecord(3, { txn: 'T1', rev: 8, day: '2026-03-02', qty: -9 }),
    ];
    expect(outcomesOf(records)).toEqual(['APPLIED', 'DUPLICATE', 'STALE', 'APPLIED']);
    expect(versionsOf(records)).toEqual(['widget 2026-03-02 v1 95 OK @0', 'widget 2026-03-02 v2 91 OK @3']);
  });

  it('applies a cancel for an unseen txn (no versions); lower revisions are then STALE', () => {
    const records = [
      ledgerRecord(0, { txn: 'T9', rev: 3, op: 'cancel' }),
      ledgerRecord(1, { txn: 'T9', rev: 1, day: '2026-03-02', qty: -5 }),
      ledgerRecord(2, { txn: 'T9', rev: 2, op: 'cancel' }),
      ledgerRecord(3, { txn: 'T9', rev: 3, op: 'cancel' }),
    ];
    expect(outcomesOf(records)).toEqual(['APPLIED', 'STALE', 'STALE', 'DUPLICATE']);
    expect(versionsOf(records)).toEqual([]);
  });

  it('re-activates a cancelled txn with a higher post; the day continues its version count', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 1, day: '2026-03-02', qty: -30 }),
      ledgerRecord(1, { txn: 'T1', rev: 2, op: 'cancel' }),
      ledgerRecord(2, { txn: 'T1', rev: 3, day: '2026-03-02', qty: -30 }),
      ledgerRecord(3, { txn: 'T1', rev: 4, op: 'cancel' }),
      ledgerRecord(4, { txn: 'T1', rev: 5, day: '2026-03-02', qty: -1 }),
    ];
    expect(outcomesOf(records)).toEqual(['APPLIED', 'APPLIED', 'APPLIED', 'APPLIED', 'APPLIED']);
    expect(versionsOf(records)).toEqual([
      'widget 2026-03-02 v1 70 OK @0',
      'widget 2026-03-02 v2 retracted @1',
      'widget 2026-03-02 v3 70 OK @2',
      'widget 2026-03-02 v4 retracted @3',
      'widget 2026-03-02 v5 99 OK @4',
    ]);
  });

  it('scopes txn identity by stock key', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 2, day: '2026-03-02', qty: -30 }),
      ledgerRecord(0, { txn: 'T1', rev: 1, item: 'gadget', location: 'paris', day: '2026-03-02', qty: 3 }),
      ledgerRecord(1, { txn: 'T1', rev: 1, day: '2026-03-02', qty: -30 }),
    ];
    expect(outcomesOf(records)).toEqual(['APPLIED', 'STALE', 'APPLIED']);
    expect(versionsOf(records)).toEqual(['gadget 2026-03-02 v1 3 LOW @0', 'widget 2026-03-02 v1 70 OK @0']);
  });
});

describe('output versions (§5)', () => {
  it('moves a post to an earlier day: the new day appears, the old one is retracted', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 1, day: '2026-03-05', qty: -10 }),
      ledgerRecord(1, { txn: 'T1', rev: 2, day: '2026-03-02', qty: -10 }),
    ];
    expect(versionsOf(records)).toEqual([
      'widget 2026-03-02 v1 90 OK @1',
      'widget 2026-03-05 v1 90 OK @0',
      'widget 2026-03-05 v2 retracted @1',
    ]);
  });

  it('creates no empty amendment when a higher revision changes nothing', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 1, day: '2026-03-02', qty: -30 }),
      ledgerRecord(1, { txn: 'T1', rev: 2, day: '2026-03-02', qty: -30 }),
      ledgerRecord(2, { txn: 'T2', rev: 1, day: '2026-03-03', qty: 5 }),
      ledgerRecord(3, { txn: 'T3', rev: 1, day: '2026-03-03', qty: -5 }),
    ];
    expect(outcomesOf(records)).toEqual(['APPLIED', 'APPLIED', 'APPLIED', 'APPLIED']);
    expect(versionsOf(records)).toEqual([
      'widget 2026-03-02 v1 70 OK @0',
      'widget 2026-03-03 v1 75 OK @2',
      'widget 2026-03-03 v2 70 OK @3',
    ]);
  });

  it('keeps a day active while its posts sum to 0', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 1, day: '2026-03-03', qty: 0 }),
      ledgerRecord(1, { txn: 'T2', rev: 1, day: '2026-03-04', qty: 7 }),
      ledgerRecord(2, { txn: 'T3', rev: 1, day: '2026-03-04', qty: -7 }),
    ];
    expect(versionsOf(records)).toEqual([
      'widget 2026-03-03 v1 100 OK @0',
      'widget 2026-03-04 v1 107 OK @1',
      'widget 2026-03-04 v2 100 OK @2',
    ]);
  });

  it('changes only days on or after the earliest changed day, ascending', () => {
    const records = [
      ledgerRecord(0, { txn: 'T1', rev: 1, day: '2026-03-02', qty: -10 }),
      ledgerRecord(1, { txn: 'T2', rev: 1, day: '2026-03-04', qty: -10 }),
      ledgerRecord(2, { txn: 'T3', rev: 1, day: '2026-03-06', qty: -10 }),
      ledgerRecord(3, { txn: 'T2', rev: 2, day: '2026-03-04', qty: -20 }),
    ];
    const result = both(records);
    expect(
      result.versions.filter((v) => v.cause.offset === 3).map((v) => `${v.day} v${v.version} ${v.closing}`),
    ).toEqual(['2026-03-04 v2 70', '2026-03-06 v2 60']);
  });

  it('derives status from closing and threshold: NEGATIVE below 0, LOW below threshold, else OK', () => {
    const records = [
      ledgerRecord(0, { txn: 'A', rev: 1, day: '2026-03-02', qty: -80 }), // 20 = threshold: OK
      ledgerRecord(1, { txn: 'B', rev: 1, day: '2026-03-03', qty: -1 }), // 19: LOW
      ledgerRecord(2, { txn: 'C', rev: 1, day: '2026-03-04', qty: -19 }), // 0: LOW
      ledgerRecord(3, { txn: 'D', rev: 1, day: '2026-03-05', qty: -1 }), // -1: NEGATIVE
    ];
    expect(versionsOf(records)).toEqual([
      'widget 2026-03-02 v1 20 OK @0',
      'widget 2026-03-03 v1 19 LOW @1',
      'widget 2026-03-04 v1 0 LOW @2',
      'widget 2026-03-05 v1 -1 NEGATIVE @3',
    ]);
  });

  it('keeps closings exact at the bounds of opening and qty', () => {
    const config = {
      ...testConfig,
      stock_keys: [{ item: 'widget', location: 'berlin', partition: 0, opening: -1e12, threshold: 1e12 }],
    };
    const records = Array.from({ length: 5 }, (_, i) =>
      ledgerRecord(i, { txn: `T${i}`, rev: 2147483647, day: '2026-03-02', qty: -1e9 }),
    );
    const engine = runEngine(config, records);
    expect(engine.versions.map((v) => v.closing)).toEqual([
      -1e12 - 1e9,
      -1e12 - 2e9,
      -1e12 - 3e9,
      -1e12 - 4e9,
      -1e12 - 5e9,
    ]);
    expect(runOracle(config, records).versions).toEqual(engine.versions);
  });
});
