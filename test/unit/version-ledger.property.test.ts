import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seenInStore, seenOnTopic, VersionLedger } from '../../src/verify/version-ledger.js';
import { testConfig } from './ledger-test-kit.js';

const config = testConfig;
const days = ['2026-03-02', '2026-03-03', '2026-03-09'];
const widget = { key: 0, item: 'widget', location: 'berlin' };

const version = fc.record({
  key: fc.integer({ min: 0, max: 2 }),
  day: fc.constantFrom(...days),
  closing: fc.option(fc.integer({ min: -50, max: 50 }), { nil: null }),
  /** Added to the cause: one record (one offset) may make versions of several days. */
  sameRecord: fc.boolean(),
});

describe('VersionLedger', () => {
  it('gives back every version of every day, interleaved as the oracle made them, once sealed', () => {
    fc.assert(
      fc.property(fc.array(version, { maxLength: 300 }), (versions) => {
        const ledger = new VersionLedger(config);
        const model = new Map<string, { closing: number | null; causeOffset: number }[]>();
        let offset = 0;
        for (const generated of versions) {
          // A key's causes only grow (its partition in offset order), one version per day per record.
          const id = `${generated.key} ${generated.day}`;
          const last = model.get(id)?.at(-1)?.causeOffset ?? -1;
          offset = generated.sameRecord && offset > last ? offset : offset + 1;
          const { item, location } = config.stock_keys[generated.key] as (typeof config.stock_keys)[number];
          const v = {
            key: generated.key,
            item,
            location,
            day: generated.day,
            closing: generated.closing,
            causeOffset: offset,
          };
          const made = [...(model.get(id) ?? []), v];
          model.set(id, made);
          ledger.add({ ...v, version: made.length });
        }
        ledger.seal();
        expect(ledger.versionCount).toBe(versions.length);
        for (const [id, made] of model) {
          const [key, day] = id.split(' ') as [string, string];
          const k = config.stock_keys[Number(key)] as (typeof config.stock_keys)[number];
          const d = ledger.dayOf(k.item, k.location, day);
          expect(ledger.days.count.get(d)).toBe(made.length);
          made.forEach((v, i) => {
            const got = ledger.version(d, i + 1);
            expect([got?.closing, got?.cause]).toEqual([v.closing, { partition: k.partition, offset: v.causeOffset }]);
          });
          expect(ledger.version(d, made.length + 1)).toBeUndefined();
          ledger.mark(d, made.length, seenInStore);
          ledger.mark(d, made.length, seenOnTopic);
          expect(ledger.flags(d, made.length)).toBe(seenInStore | seenOnTopic);
          if (made.length > 1) expect(ledger.flags(d, 1)).toBe(0);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('keeps days it never made (without versions) and takes no version once sealed', () => {
    const ledger = new VersionLedger(config);
    expect(() => ledger.add({ ...widget, day: '2026-03-02', version: 2, closing: 3, causeOffset: 7 })).toThrow(
      'verify: version 2 of 2026-03-02 after 0',
    );
    ledger.add({ ...widget, day: '2026-03-02', version: 1, closing: 3, causeOffset: 7 });
    ledger.seal();
    const stray = ledger.dayOf('widget', 'berlin', '2026-04-01');
    expect([ledger.days.count.get(stray), ledger.version(stray, 1), ledger.flags(stray, 1)]).toEqual([0, undefined, 0]);
    expect(ledger.findDay('widget', 'berlin', '2026-04-01')).toBe(stray);
    expect(ledger.findDay('widget', 'berlin', '2026-04-02')).toBeUndefined();
    expect(() => ledger.add({ ...widget, day: '2026-03-02', version: 2, closing: 4, causeOffset: 8 })).toThrow(
      'verify: a version added after the ledger was sealed',
    );
  });
});
