/** The strict decoder's own contract: lexemes, details with byte offsets, depth, conversions. */
import { describe, expect, it } from 'vitest';
import {
  decodeStrictJson,
  decodeUtf8,
  parseStrictJsonText,
  plainInteger,
  toPlainJson,
} from '../../src/domain/strict-json.js';
import { bytes } from './ledger-test-kit.js';

function detailOf(input: Uint8Array | string): string {
  const result = typeof input === 'string' ? parseStrictJsonText(input) : decodeStrictJson(input);
  if (result.ok) throw new Error('expected a decoding failure');
  return result.detail;
}

describe('strict JSON decoding', () => {
  it('keeps each number lexeme exactly as written', () => {
    const result = parseStrictJsonText('[1, 1.0, 1e2, 1E0, -0, 12345678901234567890, 0.5e-3]');
    expect(result.ok && result.value.type === 'array' && result.value.items).toEqual(
      ['1', '1.0', '1e2', '1E0', '-0', '12345678901234567890', '0.5e-3'].map((lexeme) => ({ type: 'number', lexeme })),
    );
  });

  it('recognises plain integers only', () => {
    expect(plainInteger('0')).toBe(0n);
    expect(plainInteger('-0')).toBe(0n);
    expect(plainInteger('-17')).toBe(-17n);
    expect(plainInteger('12345678901234567890')).toBe(12345678901234567890n);
    for (const lexeme of ['1.0', '1e2', '1E0', '-1e0', '0.5', '01']) expect(plainInteger(lexeme)).toBeUndefined();
  });

  it('names the problem and its byte offset', () => {
    expect(detailOf(bytes('{"schema":1,"qty":-30,"qty":1}'))).toBe('duplicate member "qty" at byte 22');
    expect(detailOf(bytes('{"item":1,"it\\u0065m":2}'))).toBe('duplicate member "item" at byte 10');
    expect(detailOf(bytes('["\\ud800"]'))).toBe('unpaired surrogate escape at byte 2');
    expect(detailOf(bytes('{} x'))).toBe('trailing data after the JSON value at byte 3');
    expect(detailOf(bytes(''))).toBe('no JSON value at byte 0');
    expect(detailOf(bytes('"ä\u0001"'))).toBe('unescaped control character U+0001 in a string at byte 3');
    expect(detailOf(bytes([0xef, 0xbb, 0xbf], '{}'))).toBe('starts with a byte-order mark');
    expect(detailOf(bytes('"', [0xff], '"'))).toBe('not valid UTF-8');
  });

  it('names the path down to a problem, as a reader writes it', () => {
    const pathOf = (text: string) => {
      const result = parseStrictJsonText(text);
      return result.ok ? 'parsed' : result.path;
    };
    expect(pathOf('{"a":1,"a":2}')).toBe('');
    expect(pathOf('{"config":{"stock_keys":[{},{"opening":1,"opening":2}]}}')).toBe('config.stock_keys[1]');
    expect(pathOf('{"a b":[[1,2,{"x":1,"x":1}]]}')).toBe('["a b"][0][2]');
    expect(pathOf('{"a":[1,2,}')).toBe('a[2]');
  });

  it('rejects a lone surrogate already present in decoded text', () => {
    expect(detailOf('["a\ud800"]')).toBe('unpaired surrogate at byte 3');
    expect(parseStrictJsonText('["\ud83d\ude00"]').ok).toBe(true);
  });

  it('counts the top-level container as depth 1 and allows 64 levels', () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
    expect(parseStrictJsonText(nested(64)).ok).toBe(true);
    expect(detailOf(nested(65))).toMatch(/^more than 64 nested objects and arrays at byte \d+$/);
    expect(parseStrictJsonText(nested(65), { depthMax: 65 }).ok).toBe(true);
    // Far deeper garbage fails fast instead of overflowing the stack.
    expect(detailOf('['.repeat(100_000))).toMatch(/^more than 64 nested/);
  });

  it('keeps BOM bytes visible to the caller', () => {
    expect(decodeUtf8(bytes([0xef, 0xbb, 0xbf], 'x'))).toBe('\ufeffx');
    expect(decodeUtf8(bytes([0xed, 0xa0, 0x80]))).toBeUndefined();
  });

  it('converts back to plain values, keeping a member named __proto__ as a member', () => {
    const result = parseStrictJsonText('{"__proto__":{"x":1},"n":[1.0,-0,true,null,"s"]}');
    if (!result.ok) throw new Error(result.detail);
    const plain = toPlainJson(result.value) as Record<string, unknown>;
    expect(Object.keys(plain)).toEqual(['__proto__', 'n']);
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
    expect(plain.n).toEqual([1, 0, true, null, 's']);
  });
});
