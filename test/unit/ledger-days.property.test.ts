import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints } from '../../src/domain/canonical-json.js';
import { dayCode, dayText } from '../../src/verify/day-code.js';
import { LedgerDays } from '../../src/verify/ledger-days.js';
import { testConfig } from './ledger-test-kit.js';

const digits = (n: number) => fc.stringMatching(new RegExp(`^[0-9]{${n}}$`));
const digitDay = fc.tuple(digits(4), digits(2), digits(2)).map(([y, m, d]) => `${y}-${m}-${d}`);
const anyDay = fc.oneof(digitDay, fc.string({ maxLength: 12 }));

describe('day codes', () => {
  it('round-trip every DDDD-DD-DD text and order like it', () => {
    fc.assert(
      fc.property(digitDay, digitDay, (a, b) => {
        expect(dayText(dayCode(a))).toBe(a);
        expect(Math.sign(dayCode(a) - dayCode(b))).toBe(Math.sign(compareCodePoints(a, b)));
      }),
    );
  });

  it('give no code to text of another shape', () => {
    for (const text of ['2026-3-01', '2026/03/01', '２０２６-03-01', '', '2026-03-01 ']) expect(dayCode(text)).toBe(-1);
  });
});

describe('LedgerDays', () => {
  const pairs = [
    ...testConfig.stock_keys.map((k) => [k.item, k.location] as const),
    ['widget', 'berlin'] as const,
    ['Widget', 'b\u00e9rlin'] as const,
  ];
  const named = fc.tuple(fc.constantFrom(...pairs), anyDay);

  it('gives one id per (item, location, day), finds only what it made, and sorts like the text', () => {
    fc.assert(
      fc.property(fc.array(named, { maxLength: 200 }), fc.array(named, { maxLength: 20 }), (made, probed) => {
        const days = new LedgerDays(testConfig);
        const model = new Map<string, number>();
        for (const [[item, location], day] of made) {
          const id = days.of(item, location, day);
          const key = JSON.stringify([item, location, day]);
          expect(model.get(key) ?? id).toBe(id);
          model.set(key, id);
          expect(days.name(id)).toEqual({ item, location, day });
        }
        expect(days.size).toBe(model.size);
        for (const [[item, location], day] of probed) {
          expect(days.find(item, location, day)).toBe(model.get(JSON.stringify([item, location, day])));
        }
        const odd = (day: string) => dayCode(day) === -1;
        const byText = [...model.entries()]
          .map(([key, id]) => [JSON.parse(key) as [string, string, string], id] as const)
          .sort(
            ([a], [b]) =>
              compareCodePoints(a[0], b[0]) ||
              compareCodePoints(a[1], b[1]) ||
              Number(odd(a[2])) - Number(odd(b[2])) ||
              (odd(a[2]) ? 0 : compareCodePoints(a[2], b[2])),
          );
        const sorted = [...days.sorted(compareCodePoints)];
        // Odd days come last in a pair, in the order they were first named.
        const sameSlot = (i: number) => byText[i]?.[0].slice(0, 2).join() + String(odd(byText[i]?.[0][2] ?? ''));
        sorted.forEach((id, i) => {
          const name = days.name(id);
          expect(sameSlot(i)).toBe([name.item, name.location].join() + String(odd(name.day)));
          if (!odd(name.day)) expect(id).toBe(byText[i]?.[1]);
        });
      }),
      { numRuns: 200 },
    );
  });

  it("knows the oracle's stock keys by their number, with their terms", () => {
    const days = new LedgerDays(testConfig);
    const k = testConfig.stock_keys[1] as (typeof testConfig.stock_keys)[number];
    const id = days.ofKey(7, k.item, k.location, '2026-03-02');
    expect(days.of(k.item, k.location, '2026-03-02')).toBe(id);
    expect(days.ofKey(7, 'ignored once known', '', '2026-03-02')).toBe(id);
    expect(days.stockKey(id)).toEqual({ partition: k.partition, opening: k.opening, threshold: k.threshold });
    expect(days.stockKey(days.of('widget', 'nowhere', '2026-03-02'))).toBeUndefined();
  });
});
