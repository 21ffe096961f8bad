/**
 * Every key rule (domain.md §2) and every envelope rule (§3) as raw bytes, each decided by
 * the incremental engine and by the oracle on an empty ledger. Valid variants show what a
 * rule does *not* reject.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/domain/decide.js';
import type { Outcome } from '../../src/domain/decision.js';
import { runFastOracle } from '../support/fast-oracle-run.js';
import { runOracle } from '../support/reference-oracle.js';
import { astralItem, bytes, cancelText, keyText, postText, testConfig } from './ledger-test-kit.js';

interface RawCase {
  name: string;
  key: Uint8Array | null;
  value: Uint8Array | null;
  partition?: number;
  outcome: Outcome;
}

const validKey = bytes(keyText());
const validPost = bytes(postText());

/** domain.md §4, the "quarantined" column. */
const quarantinedBySpec: Record<Outcome, boolean> = {
  MALFORMED: true,
  SCHEMA: true,
  KEY_MISMATCH: true,
  UNKNOWN_KEY: true,
  ROUTING: true,
  BEFORE_ORIGIN: true,
  STALE: false,
  DUPLICATE: false,
  CONFLICT: true,
  APPLIED: false,
};

function keyCase(name: string, key: Uint8Array | null, outcome: Outcome = 'KEY_MISMATCH'): RawCase {
  return { name: `key: ${name}`, key, value: validPost, outcome };
}

function valueCase(name: string, value: Uint8Array | null, outcome: Outcome, key = validKey): RawCase {
  return { name: `value: ${name}`, key, value, outcome };
}

const keyCases: RawCase[] = [
  keyCase('null (missing key)', null),
  keyCase('empty bytes', bytes()),
  keyCase('only whitespace', bytes('  ')),
  keyCase('invalid UTF-8 byte 0xFF', bytes('{"item":"wid', [0xff], 'get","location":"berlin"}')),
  keyCase('overlong UTF-8 (C0 AF)', bytes('{"item":"widget","location":"berlin', [0xc0, 0xaf], '"}')),
  keyCase('UTF-8 encoded surrogate (ED A0 80)', bytes('{"item":"widget","location":"berlin', [0xed, 0xa0, 0x80], '"}')),
  keyCase('truncated UTF-8 sequence', bytes('{"item":"widget","location":"berlin', [0xe2, 0x82], '"}')),
  keyCase('leading byte-order mark', bytes([0xef, 0xbb, 0xbf], keyText())),
  keyCase('two JSON values', bytes(keyText(), keyText())),
  keyCase('trailing non-whitespace', bytes(keyText(), ' x')),
  keyCase('trailing comma', bytes('{"item":"widget","location":"berlin",}')),
  keyCase(
    'whitespace around and between tokens',
    bytes(' \t\r\n{ "item" : "widget" ,\n "location":"berlin" } \n'),
    'APPLIED',
  ),
  keyCase('members in the other order', bytes('{"location":"berlin","item":"widget"}'), 'APPLIED'),
  keyCase('member name escaped as "it\\u0065m"', bytes('{"it\\u0065m":"widget","location":"berlin"}'), 'APPLIED'),
  keyCase('member values escaped', bytes('{"item":"w\\u0069dget","location":"berl\\u0069n"}'), 'APPLIED'),
  keyCase('not an object: array', bytes('["widget","berlin"]')),
  keyCase('not an object: string', bytes('"widget"')),
  keyCase('not an object: JSON null', bytes('null')),
  keyCase('item is a number', bytes('{"item":1,"location":"berlin"}')),
  keyCase('location is null', bytes('{"item":"widget","location":null}')),
  keyCase('item is an array', bytes('{"item":["widget"],"location":"berlin"}')),
  keyCase('item is an object', bytes('{"item":{"name":"widget"},"location":"berlin"}')),
  keyCase('item is a boolean', bytes('{"item":true,"location":"berlin"}')),
  keyCase('duplicate member', bytes('{"item":"widget","item":"widget","location":"berlin"}')),
  keyCase(
    'duplicate member via escape "it\\u0065m"',
    bytes('{"item":"widget","it\\u0065m":"widget","location":"berlin"}'),
  ),
  keyCase('member "Item" instead of "item"', bytes('{"Item":"widget","location":"berlin"}')),
  keyCase('member "ITEM" besides "item"', bytes('{"item":"widget","ITEM":"widget","location":"berlin"}')),
  keyCase('an extra member', bytes('{"item":"widget","location":"berlin","x":"y"}')),
  keyCase('missing location', bytes('{"item":"widget"}')),
  keyCase('empty object', bytes('{}')),
  keyCase('unpaired high surrogate escape', bytes('{"item":"widget\\ud800","location":"berlin"}')),
  keyCase('unpaired low surrogate escape', bytes('{"item":"\\udc00widget","location":"berlin"}')),
  keyCase(
    'high surrogate escape then a non-surrogate escape',
    bytes('{"item":"widget\\ud800\\u0041","location":"berlin"}'),
  ),
  keyCase('unescaped control character U+0001', bytes('{"item":"wid\u0001get","location":"berlin"}')),
  keyCase('names another stock key than the envelope', bytes(keyText('gadget', 'paris'))),
  keyCase('differs from the envelope in case', bytes(keyText('Widget', 'berlin'))),
  keyCase('differs from the envelope by a trailing space', bytes(keyText('widget ', 'berlin'))),
];

const deepArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const emoji64 = JSON.stringify(astralItem);
const emoji65 = JSON.stringify(`${astralItem}😀`);
const a64 = JSON.stringify('a'.repeat(64));
const a65 = JSON.stringify('a'.repeat(65));

const strictDecodingCases: RawCase[] = [
  valueCase('null (missing value)', null, 'MALFORMED'),
  valueCase('empty bytes', bytes(), 'MALFORMED'),
  valueCase('only whitespace', bytes(' \n'), 'MALFORMED'),
  valueCase('invalid UTF-8 byte 0xFF in a string', bytes('{"schema":1,"txn":"T', [0xff], '1"}'), 'MALFORMED'),
  valueCase('overlong UTF-8 (C0 AF)', bytes('{"schema":1,"txn":"T', [0xc0, 0xaf], '1"}'), 'MALFORMED'),
  valueCase('UTF-8 encoded surrogate', bytes('{"schema":1,"txn":"T', [0xed, 0xb0, 0x80], '1"}'), 'MALFORMED'),
  valueCase('leading byte-order mark', bytes([0xef, 0xbb, 0xbf], postText()), 'MALFORMED'),
  valueCase('top level is an array', bytes(`[${postText()}]`), 'MALFORMED'),
  valueCase('top level is a string', bytes('"post"'), 'MALFORMED'),
  valueCase('top level is a number', bytes('1'), 'MALFORMED'),
  valueCase('top level is true', bytes('true'), 'MALFORMED'),
  valueCase('top level is JSON null', bytes('null'), 'MALFORMED'),
  valueCase('two JSON values', bytes(postText(), postText()), 'MALFORMED'),
  valueCase('trailing non-whitespace', bytes(postText(), ' x'), 'MALFORMED'),
  valueCase('trailing whitespace', bytes(postText(), ' \r\n\t'), 'APPLIED'),
  valueCase('duplicate member "qty"', bytes(postText({}, ['"qty":-30'])), 'MALFORMED'),
  valueCase('duplicate member via escape "it\\u0065m"', bytes(postText({}, ['"it\\u0065m":"widget"'])), 'MALFORMED'),
  valueCase('duplicate member nested in an unknown member', bytes(postText({}, ['"note":{"a":1,"a":2}'])), 'MALFORMED'),
  valueCase('unpaired surrogate escape in txn', bytes(postText({ txn: '"T\\ud800"' })), 'MALFORMED'),
  valueCase(
    'unpaired surrogate escape deep in an unknown member',
    bytes(postText({}, ['"note":[["\\udfff"]]'])),
    'MALFORMED',
  ),
  valueCase('unpaired surrogate escape in a member name', bytes(postText({}, ['"\\ud800":1'])), 'MALFORMED'),
  valueCase('unescaped U+0000 in a string', bytes(postText({ location: '"ber\u0000lin"' })), 'MALFORMED'),
  valueCase('unescaped U+0001 in item', bytes(postText({ item: '"wid\u0001get"' })), 'MALFORMED'),
  valueCase('unescaped tab in txn', bytes(postText({ txn: '"T\t1"' })), 'MALFORMED'),
  valueCase('unescaped newline in a string', bytes(postText({ op: '"po\nst"' })), 'MALFORMED'),
  valueCase('unescaped U+001F in a member name', bytes(postText({}, ['"n\u001fote":1'])), 'MALFORMED'),
  valueCase('65 nested objects and arrays', bytes(postText({}, [`"note":${deepArray(64)}`])), 'MALFORMED'),
  valueCase(
    '64 nested objects and arrays (decodes; unknown member)',
    bytes(postText({}, [`"note":${deepArray(63)}`])),
    'SCHEMA',
  ),
  valueCase('number with a leading zero', bytes(postText({ rev: '01' })), 'MALFORMED'),
  valueCase('number "-" alone', bytes(postText({ qty: '-' })), 'MALFORMED'),
  valueCase('number "1."', bytes(postText({ qty: '1.' })), 'MALFORMED'),
  valueCase('number ".5"', bytes(postText({ qty: '.5' })), 'MALFORMED'),
  valueCase('number "+1"', bytes(postText({ qty: '+1' })), 'MALFORMED'),
  valueCase('NaN', bytes(postText({ qty: 'NaN' })), 'MALFORMED'),
  valueCase('Infinity', bytes(postText({ qty: 'Infinity' })), 'MALFORMED'),
  valueCase('hexadecimal number', bytes(postText({ qty: '0x10' })), 'MALFORMED'),
  valueCase('literal True', bytes(postText({ schema: 'True' })), 'MALFORMED'),
  valueCase('single-quoted string', bytes(postText({ op: "'post'" })), 'MALFORMED'),
  valueCase('unterminated string', bytes('{"schema":1,"txn":"T1'), 'MALFORMED'),
  valueCase('unterminated object', bytes(postText().slice(0, -1)), 'MALFORMED'),
  valueCase('invalid escape \\x', bytes(postText({ txn: '"T\\x41"' })), 'MALFORMED'),
  valueCase('short \\u escape', bytes(postText({ txn: '"T\\u41"' })), 'MALFORMED'),
  valueCase('trailing comma', bytes(postText().replace(/}$/, ',}')), 'MALFORMED'),
  valueCase('missing colon', bytes(postText().replace('"schema":1', '"schema" 1')), 'MALFORMED'),
  valueCase('unquoted member name', bytes(postText().replace('"schema":1', 'schema:1')), 'MALFORMED'),
];

const memberRuleCases: RawCase[] = [
  valueCase('unknown member "note"', bytes(postText({}, ['"note":"x"'])), 'SCHEMA'),
  valueCase('member "Schema" besides "schema"', bytes(postText({}, ['"Schema":1'])), 'SCHEMA'),
  valueCase('unknown member with null value', bytes(postText({}, ['"note":null'])), 'SCHEMA'),
  // schema
  valueCase('schema missing', bytes(postText({ schema: undefined })), 'SCHEMA'),
  valueCase('schema 2 (unsupported)', bytes(postText({ schema: '2' })), 'SCHEMA'),
  valueCase('schema 0', bytes(postText({ schema: '0' })), 'SCHEMA'),
  valueCase('schema "1" (a string)', bytes(postText({ schema: '"1"' })), 'SCHEMA'),
  valueCase('schema 1.0', bytes(postText({ schema: '1.0' })), 'SCHEMA'),
  valueCase('schema 1e0', bytes(postText({ schema: '1e0' })), 'SCHEMA'),
  valueCase('schema 1E0', bytes(postText({ schema: '1E0' })), 'SCHEMA'),
  valueCase('schema null', bytes(postText({ schema: 'null' })), 'SCHEMA'),
  valueCase('schema true', bytes(postText({ schema: 'true' })), 'SCHEMA'),
  // txn
  valueCase('txn missing', bytes(postText({ txn: undefined })), 'SCHEMA'),
  valueCase('txn empty', bytes(postText({ txn: '""' })), 'SCHEMA'),
  valueCase('txn of 65 characters', bytes(postText({ txn: a65 })), 'SCHEMA'),
  valueCase('txn of 64 characters', bytes(postText({ txn: a64 })), 'APPLIED'),
  valueCase('txn using every allowed character class', bytes(postText({ txn: '"aZ09._:-"' })), 'APPLIED'),
  valueCase('txn with a space', bytes(postText({ txn: '"T 1"' })), 'SCHEMA'),
  valueCase('txn with a slash', bytes(postText({ txn: '"T/1"' })), 'SCHEMA'),
  valueCase('txn with a non-ASCII letter', bytes(postText({ txn: '"Tä"' })), 'SCHEMA'),
  valueCase('txn with an escaped control character', bytes(postText({ txn: '"T\\u0001"' })), 'SCHEMA'),
  valueCase('txn a number', bytes(postText({ txn: '1' })), 'SCHEMA'),
  valueCase('txn null', bytes(postText({ txn: 'null' })), 'SCHEMA'),
  // rev
  valueCase('rev missing', bytes(postText({ rev: undefined })), 'SCHEMA'),
  valueCase('rev 0', bytes(postText({ rev: '0' })), 'SCHEMA'),
  valueCase('rev -1', bytes(postText({ rev: '-1' })), 'SCHEMA'),
  valueCase('rev -0 (is 0)', bytes(postText({ rev: '-0' })), 'SCHEMA'),
  valueCase('rev 2^31 (2147483648)', bytes(postText({ rev: '2147483648' })), 'SCHEMA'),
  valueCase('rev 2^31-1 (2147483647)', bytes(postText({ rev: '2147483647' })), 'APPLIED'),
  valueCase('rev 99999999999999999999', bytes(postText({ rev: '99999999999999999999' })), 'SCHEMA'),
  valueCase('rev "1" (a string)', bytes(postText({ rev: '"1"' })), 'SCHEMA'),
  valueCase('rev 1.0', bytes(postText({ rev: '1.0' })), 'SCHEMA'),
  valueCase('rev 1e2', bytes(postText({ rev: '1e2' })), 'SCHEMA'),
  valueCase('rev 1E0', bytes(postText({ rev: '1E0' })), 'SCHEMA'),
  valueCase('rev 1.5', bytes(postText({ rev: '1.5' })), 'SCHEMA'),
  valueCase('rev null', bytes(postText({ rev: 'null' })), 'SCHEMA'),
  // op
  valueCase('op missing', bytes(postText({ op: undefined })), 'SCHEMA'),
  valueCase('op "POST"', bytes(postText({ op: '"POST"' })), 'SCHEMA'),
  valueCase('op "delete"', bytes(postText({ op: '"delete"' })), 'SCHEMA'),
  valueCase('op ""', bytes(postText({ op: '""' })), 'SCHEMA'),
  valueCase('op a number', bytes(postText({ op: '1' })), 'SCHEMA'),
  valueCase('op null', bytes(postText({ op: 'null' })), 'SCHEMA'),
  // item (lengths in code points; control characters U+0000–U+001F and U+007F–U+009F)
  valueCase('item missing', bytes(postText({ item: undefined })), 'SCHEMA'),
  valueCase('item empty', bytes(postText({ item: '""' })), 'SCHEMA'),
  valueCase('item of 65 ASCII characters', bytes(postText({ item: a65 })), 'SCHEMA'),
  valueCase(
    'item of 64 ASCII characters',
    bytes(postText({ item: a64 })),
    'UNKNOWN_KEY',
    bytes(keyText('a'.repeat(64))),
  ),
  valueCase('item of 65 astral code points', bytes(postText({ item: emoji65 })), 'SCHEMA'),
  valueCase(
    'item of 64 astral code points (128 UTF-16 units)',
    bytes(postText({ item: emoji64, location: '"lager"' })),
    'APPLIED',
    bytes(keyText(astralItem, 'lager')),
  ),
  valueCase(
    'item of 64 astral code points as surrogate-pair escapes',
    bytes(postText({ item: `"${'\\ud83d\\ude00'.repeat(64)}"`, location: '"lager"' })),
    'APPLIED',
    bytes(keyText(astralItem, 'lager')),
  ),
  valueCase('item with escaped U+0000', bytes(postText({ item: '"wid\\u0000get"' })), 'SCHEMA'),
  valueCase('item with escaped U+001F', bytes(postText({ item: '"wid\\u001fget"' })), 'SCHEMA'),
  valueCase('item with escaped U+007F', bytes(postText({ item: '"wid\\u007fget"' })), 'SCHEMA'),
  valueCase('item with escaped U+0080', bytes(postText({ item: '"wid\\u0080get"' })), 'SCHEMA'),
  valueCase('item with escaped U+009F', bytes(postText({ item: '"wid\\u009Fget"' })), 'SCHEMA'),
  valueCase('item with raw U+007F (DEL)', bytes(postText({ item: '"wid\u007fget"' })), 'SCHEMA'),
  valueCase('item with raw U+0085', bytes(postText({ item: '"wid\u0085get"' })), 'SCHEMA'),
  valueCase(
    'item with U+00A0 (not a control character)',
    bytes(postText({ item: '"wid\u00a0get"' })),
    'UNKNOWN_KEY',
    bytes(keyText('wid\u00a0get')),
  ),
  valueCase('item with U+0020', bytes(postText({ item: '"wid get"' })), 'UNKNOWN_KEY', bytes(keyText('wid get'))),
  valueCase('item a number', bytes(postText({ item: '7' })), 'SCHEMA'),
  valueCase('item null', bytes(postText({ item: 'null' })), 'SCHEMA'),
  valueCase('item an array', bytes(postText({ item: '["widget"]' })), 'SCHEMA'),
  // location
  valueCase('location missing', bytes(postText({ location: undefined })), 'SCHEMA'),
  valueCase('location empty', bytes(postText({ location: '""' })), 'SCHEMA'),
  valueCase('location of 65 characters', bytes(postText({ location: a65 })), 'SCHEMA'),
  valueCase(
    'location of 64 characters',
    bytes(postText({ location: a64 })),
    'UNKNOWN_KEY',
    bytes(keyText('widget', 'a'.repeat(64))),
  ),
  valueCase('location with escaped U+0007', bytes(postText({ location: '"ber\\u0007lin"' })), 'SCHEMA'),
  valueCase('location with escaped U+0090', bytes(postText({ location: '"ber\\u0090lin"' })), 'SCHEMA'),
  valueCase('location a number', bytes(postText({ location: '1' })), 'SCHEMA'),
  valueCase('location null', bytes(postText({ location: 'null' })), 'SCHEMA'),
  // day (post only)
  valueCase('post without day', bytes(postText({ day: undefined })), 'SCHEMA'),
  valueCase('day null', bytes(postText({ day: 'null' })), 'SCHEMA'),
  valueCase('day a number', bytes(postText({ day: '20260302' })), 'SCHEMA'),
  valueCase('day 2026-02-30 (not a real date)', bytes(postText({ day: '"2026-02-30"' })), 'SCHEMA'),
  valueCase('day 2026-13-01', bytes(postText({ day: '"2026-13-01"' })), 'SCHEMA'),
  valueCase('day 2026-03-00', bytes(postText({ day: '"2026-03-00"' })), 'SCHEMA'),
  valueCase('day 2026-3-02 (not zero-padded)', bytes(postText({ day: '"2026-3-02"' })), 'SCHEMA'),
  valueCase('day with a time', bytes(postText({ day: '"2026-03-02T00:00"' })), 'SCHEMA'),
  valueCase('day 20260302 as a string', bytes(postText({ day: '"20260302"' })), 'SCHEMA'),
  valueCase('day with a leading space', bytes(postText({ day: '" 2026-03-02"' })), 'SCHEMA'),
  valueCase('day 2100-02-29 (not a leap year)', bytes(postText({ day: '"2100-02-29"' })), 'SCHEMA'),
  valueCase('day 0000-01-01', bytes(postText({ day: '"0000-01-01"' })), 'SCHEMA'),
  valueCase('day 2028-02-29 (a leap day)', bytes(postText({ day: '"2028-02-29"' })), 'APPLIED'),
  valueCase('day 2024-02-29 (valid, before the origin)', bytes(postText({ day: '"2024-02-29"' })), 'BEFORE_ORIGIN'),
  valueCase('day with escaped digits', bytes(postText({ day: '"2026-03-0\\u0032"' })), 'APPLIED'),
  // qty (post only)
  valueCase('post without qty', bytes(postText({ qty: undefined })), 'SCHEMA'),
  valueCase('qty null', bytes(postText({ qty: 'null' })), 'SCHEMA'),
  valueCase('qty "5" (a string)', bytes(postText({ qty: '"5"' })), 'SCHEMA'),
  valueCase('qty 1.0', bytes(postText({ qty: '1.0' })), 'SCHEMA'),
  valueCase('qty 1e2', bytes(postText({ qty: '1e2' })), 'SCHEMA'),
  valueCase('qty 1E0', bytes(postText({ qty: '1E0' })), 'SCHEMA'),
  valueCase('qty -1.5', bytes(postText({ qty: '-1.5' })), 'SCHEMA'),
  valueCase('qty 10^9+1', bytes(postText({ qty: '1000000001' })), 'SCHEMA'),
  valueCase('qty -(10^9+1)', bytes(postText({ qty: '-1000000001' })), 'SCHEMA'),
  valueCase('qty 10^9', bytes(postText({ qty: '1000000000' })), 'APPLIED'),
  valueCase('qty -10^9', bytes(postText({ qty: '-1000000000' })), 'APPLIED'),
  valueCase('qty 0', bytes(postText({ qty: '0' })), 'APPLIED'),
  valueCase('qty -0 (is 0)', bytes(postText({ qty: '-0' })), 'APPLIED'),
  // cancel
  valueCase('cancel without day and qty', bytes(cancelText()), 'APPLIED'),
  valueCase('cancel with day', bytes(cancelText({}, ['"day":"2026-03-02"'])), 'SCHEMA'),
  valueCase('cancel with qty', bytes(cancelText({}, ['"qty":1'])), 'SCHEMA'),
  valueCase('cancel with day null', bytes(cancelText({}, ['"day":null'])), 'SCHEMA'),
  valueCase('cancel with qty null', bytes(cancelText({}, ['"qty":null'])), 'SCHEMA'),
  valueCase('cancel with an unknown member', bytes(cancelText({}, ['"reason":"typo"'])), 'SCHEMA'),
];

const allCases = [...keyCases, ...strictDecodingCases, ...memberRuleCases];

describe('raw-byte cases: every key rule (§2) and envelope rule (§3), one record on an empty ledger', () => {
  it.each(allCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const record = { partition: c.partition ?? 0, offset: 0, key: c.key, value: c.value };
    const engine = decide(record, testConfig, new Map()).decision;
    const oracle = runOracle(testConfig, [record]).decisions[0];
    expect(engine.outcome).toBe(c.outcome);
    expect(oracle?.outcome).toBe(c.outcome);
    expect(engine.quarantined).toBe(quarantinedBySpec[c.outcome]);
    expect(engine.detail !== null).toBe(engine.quarantined);
    // item, location, txn and rev are null exactly when the envelope did not pass SCHEMA.
    const envelopePassed = c.outcome !== 'MALFORMED' && c.outcome !== 'SCHEMA';
    expect(engine.txn !== null).toBe(envelopePassed);
    expect(engine.rev !== null).toBe(envelopePassed);
    expect(engine.item !== null && engine.location !== null).toBe(envelopePassed);
    expect({ ...oracle, detail: null }).toEqual({ ...engine, detail: null });
    // The verifier's fast oracle, with its own decoders, says the same.
    expect(runFastOracle(testConfig, [record]).decisions).toEqual([{ ...engine, detail: null }]);
  });

  it('has at least one case per rule group', () => {
    expect(keyCases.length).toBeGreaterThanOrEqual(30);
    expect(strictDecodingCases.length + memberRuleCases.length).toBeGreaterThanOrEqual(100);
  });
});
