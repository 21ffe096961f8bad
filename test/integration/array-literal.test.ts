/**
 * The batch statement's array parameters (src/io/store/array-literal.ts) read back by the real
 * PostgreSQL as exactly the values written: text with quotes, backslashes, braces, commas,
 * "NULL", empty strings and any Unicode; bytes of any value; integers to ±2^53; NULLs.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { booleanArray, byteaArray, integerArray, textArray } from '../../src/io/store/array-literal.js';
import { testDatabaseUrl } from '../support/endpoints.js';

const client = new pg.Client({ connectionString: testDatabaseUrl });
beforeAll(async () => {
  await client.connect();
});
afterAll(async () => {
  await client.end();
});

// PostgreSQL text cannot hold U+0000 (the store escapes it in the one free-text column).
const pgText = fc.string({ unit: 'binary', maxLength: 20 }).map((s) => s.replaceAll('\u0000', ''));
const awkward = fc.constantFrom('NULL', 'null', '', ' ', '"', '\\', '{}', 'a,b', '\\"', '{"x":1}');
const texts = fc.array(fc.option(fc.oneof(pgText, awkward), { nil: null }), { maxLength: 30 });

async function readBack(literal: string | Buffer, type: string): Promise<unknown[]> {
  const result = await client.query(`SELECT $1::${type} AS v`, [literal]);
  return result.rows[0].v as unknown[];
}

describe('array literals', () => {
  it('text[] reads back exactly', async () => {
    await fc.assert(
      fc.asyncProperty(texts, async (values) => {
        expect(await readBack(textArray(values), 'text[]')).toEqual(values);
      }),
      { numRuns: 200 },
    );
  });

  it('bigint[] and bool[] read back exactly', async () => {
    const integers = fc.array(fc.option(fc.maxSafeInteger(), { nil: null }), { maxLength: 30 });
    const booleans = fc.array(fc.option(fc.boolean(), { nil: null }), { maxLength: 30 });
    await fc.assert(
      fc.asyncProperty(integers, booleans, async (ints, bools) => {
        // pg returns int8 as text: compare the decimal digits.
        expect(await readBack(integerArray(ints), 'bigint[]')).toEqual(
          ints.map((n) => (n === null ? null : String(n))),
        );
        expect(await readBack(booleanArray(bools), 'bool[]')).toEqual(bools);
      }),
      { numRuns: 200 },
    );
    expect(() => integerArray([1.5])).toThrow(/not a safe integer/);
  });

  it('bytea[] (binary array format) reads back byte for byte, Buffers and other Uint8Array views alike', async () => {
    const bytes = fc.array(fc.option(fc.uint8Array({ maxLength: 40 }), { nil: null }), { maxLength: 20 });
    await fc.assert(
      fc.asyncProperty(bytes, async (values) => {
        const back = (await readBack(byteaArray(values), 'bytea[]')) as (Buffer | null)[];
        expect(back.map((b) => (b === null ? null : [...b]))).toEqual(values.map((v) => (v === null ? null : [...v])));
      }),
      { numRuns: 200 },
    );
    const view = new Uint8Array([9, 0, 255, 10]).subarray(1, 3);
    expect([...((await readBack(byteaArray([view]), 'bytea[]')) as Buffer[])[0]!]).toEqual([0, 255]);
  });
});
