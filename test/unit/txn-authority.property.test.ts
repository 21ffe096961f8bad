import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TxnAuthority, unknownTxn } from '../../src/verify/txn-authority.js';

type Op = { key: number; txn: string; rev: number; day: string | undefined; qty: number };

const op = fc.record({
  key: fc.integer({ min: 0, max: 5 }),
  // Short ids over a small alphabet collide often; full strings reach the astral planes.
  txn: fc.oneof(fc.string({ unit: fc.constantFrom('a', 'b', 'é', '😀'), maxLength: 4 }), fc.string({ unit: 'binary' })),
  rev: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constant(Number.MAX_SAFE_INTEGER)),
  day: fc.option(fc.constantFrom('2026-01-01', '2026-01-02', '2027-12-31'), { nil: undefined }),
  qty: fc.oneof(fc.integer(), fc.constant(-Number.MAX_SAFE_INTEGER), fc.constant(Number.MAX_SAFE_INTEGER)),
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
      for (const key of [0, 1]) authority.set(authority.add(key, `T-${i}`), i + 1, undefined, key === 0 ? i : -i);
    }
    expect(authority.count).toBe(200_000);
    for (let i = 0; i < 100_000; i += 997) {
      expect(authority.qty(authority.find(1, `T-${i}`))).toBe(-i);
      expect(authority.rev(authority.find(0, `T-${i}`))).toBe(i + 1);
    }
    expect(authority.find(2, 'T-5')).toBe(unknownTxn);
    expect(authority.find(0, 'T-100000')).toBe(unknownTxn);
  });
});
