/**
 * The output topic record's key and value (export-lines.ts) are written member by member for
 * speed; they must be exactly the RFC 8785 text the generic canonical writer gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/domain/canonical-json.js';
import { outputEnvelopeSchema, outputRecordKey, outputRecordValue } from '../../src/domain/export-lines.js';
import type { OutputVersion } from '../../src/domain/output-version.js';

const text = fc.string({ unit: 'binary', minLength: 1, maxLength: 64 });
const version: fc.Arbitrary<OutputVersion> = fc.record({
  item: text,
  location: text,
  day: fc.oneof(fc.constant('2026-03-01'), text),
  version: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  closing: fc.option(fc.maxSafeInteger(), { nil: null }),
  status: fc.option(fc.constantFrom('OK' as const, 'LOW' as const, 'NEGATIVE' as const), { nil: null }),
  retracted: fc.boolean(),
  cause: fc.record({ partition: fc.nat(1000), offset: fc.maxSafeNat() }),
});

describe('output record text', () => {
  it('key and value equal the generic canonical JSON of the same members', () => {
    fc.assert(
      fc.property(version, text, (v, namespace) => {
        expect(outputRecordKey(v)).toBe(canonicalJson({ day: v.day, item: v.item, location: v.location }));
        expect(outputRecordValue(v, namespace)).toBe(
          canonicalJson({
            cause: { offset: v.cause.offset, partition: v.cause.partition },
            closing: v.closing,
            day: v.day,
            item: v.item,
            location: v.location,
            namespace,
            retracted: v.retracted,
            schema: outputEnvelopeSchema,
            status: v.status,
            version: v.version,
          }),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a number JSON cannot carry', () => {
    const v: OutputVersion = {
      item: 'widget',
      location: 'berlin',
      day: '2026-03-01',
      version: 1,
      closing: Number.NaN,
      status: 'OK',
      retracted: false,
      cause: { partition: 0, offset: 0 },
    };
    expect(() => outputRecordValue(v, 'ns')).toThrow(/NaN is not a JSON number/);
  });
});
