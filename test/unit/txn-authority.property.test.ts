import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TxnAuthority, unknownTxn } from '../../src/verify/txn-authority.js';

type Op = { key: number; txn: string; rev: number; day: string | undefined; qty: number };

const txnChars = 'ABCXYZabcxyz0189._:-'.split('');
const op = fc.record({
  key: fc.integer({ min: 0, max: 5 }),
  // Short ids over a small alphabet collide often; long ones reach domain.md's 64 characters.
  txn: fc.oneof(
    fc.string({ unit: fc.constantFrom('a', 'b', '.'), minLength: 1, maxLength: 3 }),
    fc.string({ unit: fc.constantFrom(...txnChars), minLength: 1, maxLength: 64 }),
  ),
  rev: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constant(2 ** 31 - 1)),
  day: fc.option(fc.constantFrom('2026-01-01', '2026-01-02', '2027-12-31'), { nil: undefined }),
  qty: fc.oneof(fc.integer({ min: -1e9, max: 1e9 }), fc.constant(-1e9), fc.constant(1e9)),
});

describe('TxnAuthority', () => {
  it('answers like a Map of (key, txn) → (rev, day, qty), across growth', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 3000 }), (ops) => {
        const authority = new TxnAuthority();
        const model = new Map<string, Op>();
        for (const o of ops) {
          const id = JSON.stringify([o.key, o.txn]);
          let entry = authority.find(o.key, o.txn);
          expect(entry === unknownTxn).toBe(!model.has(id));
          if (entry === unknownTxn) entry = authority.add(o.key, o.txn);
          else {
            const want = model.get(id) as Op;
            expect([authority.rev(entry), authority.day(entry), authority.qty(entry)]).toEqual([
              want.rev,
              want.day,
              want.qty,
            ]);
          }
          authority.set(entry, o.rev, o.day, o.qty);
          model.set(id, o);
        }
        expect(authority.count).toBe(model.size);
        for (const [id, want] of model) {
          const [key, txn] = JSON.parse(id) as [number, string];
          const entry = authority.find(key, txn);
          expect([authority.rev(entry), authority.day(entry), authority.qty(entry)]).toEqual([
            want.rev,
            want.day,
            want.qty,
          ]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('keeps 200,000 distinct transactions of two keys apart', () => {
    const authority = new TxnAuthority();
    for (let i = 0; i < 100_000; i++) {
      for (const key of [0, 1]) authority.set(authority.add(key, `T-${i}`), i + 1, undefined, key === 0 ? i : -i - 1);
    }
    expect(authority.count).toBe(200_000);
    for (let i = 0; i < 100_000; i += 997) {
      expect(authority.qty(authority.find(1, `T-${i}`))).toBe(-i - 1);
      expect(authority.rev(authority.find(0, `T-${i}`))).toBe(i + 1);
    }
    expect(authority.find(2, 'T-5')).toBe(unknownTxn);
    expect(authority.find(0, 'T-100000')).toBe(unknownTxn);
  });

  it('keeps 64-character ids whole across the arena blocks', () => {
    const authority = new TxnAuthority();
    const id = (i: number) => `${String(i).padStart(8, '0')}${'x'.repeat(56)}`;
    // 40,000 ids of 64 bytes fill more than two 1 MiB blocks, none of them straddling.
    for (let i = 0; i < 40_000; i++) authority.set(authority.add(0, id(i)), 1, '2026-01-01', i);
    for (let i = 0; i < 40_000; i += 101) expect(authority.qty(authority.find(0, id(i)))).toBe(i);
    expect(authority.find(0, `${id(7).slice(0, 63)}y`)).toBe(unknownTxn);
  });

  it('refuses what domain.md §3 rules out, naming it', () => {
    const authority = new TxnAuthority();
    expect(() => authority.add(0, 'café')).toThrow('verify: txn "café" is not ASCII');
    expect(() => authority.add(0, 'x'.repeat(65))).toThrow('verify: txn of 65 characters');
    const entry = authority.add(0, 'ok');
    expect(() => authority.set(entry, 2 ** 31, undefined, 0)).toThrow('out of range');
    expect(() => authority.set(entry, 1, '2026-01-01', 1.5)).toThrow('out of range');
  });

  it('forgets everything on clear and reuses its memory for new ids, across arena blocks', () => {
    const authority = new TxnAuthority();
    const id = (prefix: string, i: number) => `${prefix}${String(i).padStart(8, '0')}${'y'.repeat(50)}`;
    for (let i = 0; i < 30_000; i++) authority.set(authority.add(0, id('A', i)), 2, '2026-01-02', i);
    const bytes = authority.bytes;
    authority.clear();
    expect(authority.count).toBe(0);
    expect(authority.find(0, id('A', 5))).toBe(unknownTxn);
    for (let i = 0; i < 30_000; i++) authority.set(authority.add(1, id('B', i)), 1, undefined, -i - 1);
    expect(authority.bytes).toBe(bytes);
    expect(authority.find(0, id('A', 5))).toBe(unknownTxn);
    for (let i = 0; i < 30_000; i += 97) {
      const entry = authority.find(1, id('B', i));
      expect([authority.rev(entry), authority.day(entry), authority.qty(entry)]).toEqual([1, undefined, -i - 1]);
    }
  });
});
