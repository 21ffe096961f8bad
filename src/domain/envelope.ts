/**
 * The record value, a ledger revision envelope (docs/design.md#envelope). Strict decoding runs
 * first and decides MALFORMED (including a null value and a non-object top level);
 * only a decodable object is judged by the member rules, which decide SCHEMA.
 */
import { decodeStrictJson, describeJsonType, type JsonNode, plainInteger } from './strict-json.js';
import { codePointLength, isCalendarDate, isTextField } from './text-rules.js';

interface EnvelopeCommon {
  schema: number;
  txn: string;
  rev: number;
  item: string;
  location: string;
}
export interface PostEnvelope extends EnvelopeCommon {
  op: 'post';
  day: string;
  qty: number;
}
export interface CancelEnvelope extends EnvelopeCommon {
  op: 'cancel';
  day?: undefined;
  qty?: undefined;
}
export type Envelope = PostEnvelope | CancelEnvelope;

export type EnvelopeResult =
  | { outcome: 'ok'; envelope: Envelope }
  | { outcome: 'MALFORMED'; detail: string }
  | { outcome: 'SCHEMA'; detail: string };

/**
 * The envelope format's version, the only `schema` a record may carry. It is not the
 * configuration's `schema_version`: configuration version 2 changed how keys are configured
 * and routed, not the envelope, so a team's producers keep writing `"schema":1`
 * (docs/choices.md, "Envelope schema 1 under configuration version 2").
 */
export const envelopeSchemaVersion = 1;

export const revMax = 2 ** 31 - 1;
export const qtyLimit = 10 ** 9;
const txnPattern = /^[A-Za-z0-9._:-]{1,64}$/;
const envelopeMembers = new Set(['schema', 'txn', 'rev', 'op', 'item', 'location', 'day', 'qty']);

export function decodeEnvelope(bytes: Uint8Array | null, schemaVersion: number): EnvelopeResult {
  if (bytes === null) return { outcome: 'MALFORMED', detail: 'null value' };
  const decoded = decodeStrictJson(bytes);
  if (!decoded.ok) return { outcome: 'MALFORMED', detail: decoded.detail };
  if (decoded.value.type !== 'object') {
    return { outcome: 'MALFORMED', detail: `top level is ${describeJsonType(decoded.value)}, not an object` };
  }
  try {
    return { outcome: 'ok', envelope: judgeMembers(decoded.value.members, schemaVersion) };
  } catch (error) {
    if (error instanceof SchemaViolation) return { outcome: 'SCHEMA', detail: error.message };
    throw error;
  }
}

class SchemaViolation extends Error {}

function judgeMembers(members: Map<string, JsonNode>, schemaVersion: number): Envelope {
  for (const name of members.keys()) {
    if (!envelopeMembers.has(name)) throw new SchemaViolation(`unknown member ${JSON.stringify(name)}`);
  }
  const schema = integerMember(members, 'schema', schemaVersion, schemaVersion);
  const txn = stringMember(members, 'txn');
  if (!txnPattern.test(txn)) throw new SchemaViolation('txn must be 1-64 characters of [A-Za-z0-9._:-]');
  const rev = integerMember(members, 'rev', 1, revMax);
  const op = stringMember(members, 'op');
  const item = textMember(members, 'item');
  const location = textMember(members, 'location');
  if (op === 'cancel') {
    if (members.has('day')) throw new SchemaViolation('a cancel must not carry day');
    if (members.has('qty')) throw new SchemaViolation('a cancel must not carry qty');
    return { schema, txn, rev, op, item, location };
  }
  if (op !== 'post') throw new SchemaViolation(`op must be "post" or "cancel", got ${JSON.stringify(op)}`);
  const day = stringMember(members, 'day');
  if (!isCalendarDate(day)) throw new SchemaViolation(`day must be a real calendar date YYYY-MM-DD`);
  const qty = integerMember(members, 'qty', -qtyLimit, qtyLimit);
  return { schema, txn, rev, op, item, location, day, qty };
}

function member(members: Map<string, JsonNode>, name: string): JsonNode {
  const node = members.get(name);
  if (node === undefined) throw new SchemaViolation(`missing member "${name}"`);
  if (node.type === 'null') throw new SchemaViolation(`member "${name}" is null`);
  return node;
}

function stringMember(members: Map<string, JsonNode>, name: string): string {
  const node = member(members, name);
  if (node.type !== 'string') throw new SchemaViolation(`${name} must be a string, got ${describeJsonType(node)}`);
  return node.value;
}

function textMember(members: Map<string, JsonNode>, name: string): string {
  const value = stringMember(members, name);
  if (!isTextField(value)) {
    throw new SchemaViolation(
      `${name} must be 1-64 characters without control characters (got ${codePointLength(value)} characters)`,
    );
  }
  return value;
}

/** An integer member written as a plain JSON integer, within [min, max]. */
function integerMember(members: Map<string, JsonNode>, name: string, min: number, max: number): number {
  const node = member(members, name);
  if (node.type !== 'number') throw new SchemaViolation(`${name} must be an integer, got ${describeJsonType(node)}`);
  const value = plainInteger(node.lexeme);
  if (value === undefined) throw new SchemaViolation(`${name} must be a plain integer, got ${node.lexeme}`);
  if (value < BigInt(min) || value > BigInt(max)) {
    throw new SchemaViolation(
      min === max
        ? `${name} must be ${min}, got ${node.lexeme}`
        : `${name} must be within [${min}, ${max}], got ${node.lexeme}`,
    );
  }
  return Number(value);
}
