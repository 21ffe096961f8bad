/**
 * The oracle's own decoding of a source record's key and value (docs/design.md#record-key,
 * #envelope, #outcomes, checks 1–3), written from the spec apart from the worker's decoders
 * (src/domain/record-key.ts, envelope.ts, text-rules.ts): the verifier must not repeat a decoding
 * bug of the worker. test/unit/oracle-decoder.property.test.ts holds the two against each other.
 *
 * Only outcomes matter here: a decision's free-text detail is never compared.
 */
import { NotStrictJson, type OracleJson, parseStrictJson } from './oracle-json.js';

export interface OracleEnvelope {
  txn: string;
  rev: number;
  op: 'post' | 'cancel';
  item: string;
  location: string;
  /** Post only. */
  day: string | undefined;
  qty: number | undefined;
}

export type OracleValue =
  | { outcome: 'MALFORMED' }
  | { outcome: 'SCHEMA' }
  | { outcome: 'ok'; envelope: OracleEnvelope };

export type OracleKey = { valid: false } | { valid: true; item: string; location: string };

/** docs/design.md#envelope's bounds. */
const nameLengthMax = 64;
const txnPattern = /^[A-Za-z0-9._:-]{1,64}$/;
const plainInteger = /^-?(?:0|[1-9][0-9]*)$/;
const dayPattern = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
const revMax = 2 ** 31 - 1;
const qtyMax = 1_000_000_000;

// fatal: invalid UTF-8 throws; ignoreBOM: a byte-order mark stays in the text, to be refused.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Strict JSON of UTF-8 bytes without a byte-order mark, or undefined. */
function strictJsonOf(bytes: Uint8Array | null): OracleJson | undefined {
  if (bytes === null || bytes.length === 0) return undefined;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  // The parser would refuse U+FEFF too (it is no JSON whitespace); docs/design.md#record-key names
  // the rule, so it is here.
  if (text.charCodeAt(0) === 0xfeff) return undefined;
  try {
    return parseStrictJson(text);
  } catch (error) {
    if (error instanceof NotStrictJson) return undefined;
    throw error;
  }
}

/** docs/design.md#record-key: exactly `item` and `location`, both strings; anything else is the empty stock key. */
export function decodeOracleKey(bytes: Uint8Array | null): OracleKey {
  const json = strictJsonOf(bytes);
  if (json?.kind !== 'object' || json.members.size !== 2) return { valid: false };
  const item = json.members.get('item');
  const location = json.members.get('location');
  if (item?.kind !== 'string' || location?.kind !== 'string') return { valid: false };
  return { valid: true, item: item.text, location: location.text };
}

/** docs/design.md#envelope, #outcomes checks 1–2: MALFORMED, SCHEMA, or the envelope. */
export function decodeOracleValue(bytes: Uint8Array | null, schemaVersion: number): OracleValue {
  const json = strictJsonOf(bytes);
  if (json?.kind !== 'object') return { outcome: 'MALFORMED' };
  const envelope = envelopeOf(json.members, schemaVersion);
  return envelope ? { outcome: 'ok', envelope } : { outcome: 'SCHEMA' };
}

function envelopeOf(members: Map<string, OracleJson>, schemaVersion: number): OracleEnvelope | undefined {
  // One pass over the members (this runs once per source record).
  let [schema, txn, rev, op, item, location, day, qty]: (OracleJson | undefined)[] = [];
  for (const [name, node] of members) {
    if (name === 'schema') schema = node;
    else if (name === 'txn') txn = node;
    else if (name === 'rev') rev = node;
    else if (name === 'op') op = node;
    else if (name === 'item') item = node;
    else if (name === 'location') location = node;
    else if (name === 'day') day = node;
    else if (name === 'qty') qty = node;
    else return undefined;
  }
  const revision = integerOf(rev, 1, revMax);
  const [txnText, opText, itemText, locationText] = [stringOf(txn), stringOf(op), stringOf(item), stringOf(location)];
  if (integerOf(schema, -Infinity, Infinity) !== schemaVersion || revision === undefined) return undefined;
  if (txnText === undefined || !txnPattern.test(txnText)) return undefined;
  if (itemText === undefined || !isName(itemText) || locationText === undefined || !isName(locationText))
    return undefined;
  // Literals, not spreads: an object spread here was 90 % of the decoder's time.
  if (opText === 'cancel') {
    if (day !== undefined || qty !== undefined) return undefined;
    return {
      txn: txnText,
      rev: revision,
      op: 'cancel',
      item: itemText,
      location: locationText,
      day: undefined,
      qty: undefined,
    };
  }
  const [dayText, quantity] = [stringOf(day), integerOf(qty, -qtyMax, qtyMax)];
  if (opText !== 'post' || dayText === undefined || !isRealDay(dayText) || quantity === undefined) return undefined;
  return {
    txn: txnText,
    rev: revision,
    op: 'post',
    item: itemText,
    location: locationText,
    day: dayText,
    qty: quantity,
  };
}

function stringOf(node: OracleJson | undefined): string | undefined {
  return node?.kind === 'string' ? node.text : undefined;
}

/** A plain JSON integer (`-?(0|[1-9][0-9]*)`, `-0` is 0) within [min, max]. */
function integerOf(node: OracleJson | undefined, min: number, max: number): number | undefined {
  if (node?.kind !== 'number' || !plainInteger.test(node.lexeme)) return undefined;
  const n = Number(node.lexeme) + 0;
  return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
}

/** 1–64 code points, none of them a control character (U+0000–U+001F, U+007F–U+009F). */
export function isName(s: string): boolean {
  let length = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return false;
    // A surrogate pair is one code point: count its high half only.
    if (c < 0xdc00 || c > 0xdfff) length++;
  }
  return length >= 1 && length <= nameLengthMax;
}

/** `YYYY-MM-DD`, a real proleptic Gregorian date of years 0001–9999. */
function isRealDay(s: string): boolean {
  const m = dayPattern.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const monthDays = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return day <= monthDays;
}
