/**
 * The Kafka record key (docs/design.md#record-key): a strict UTF-8 JSON object with exactly the
 * string members `item` and `location`. Anything else decodes to the *empty stock key*,
 * which matches no envelope (the record becomes KEY_MISMATCH), with a reason for the
 * quarantine detail. Raw key bytes are never altered here.
 */
import { decodeStrictJson, describeJsonType } from './strict-json.js';

export type DecodedKey =
  | { valid: true; item: string; location: string }
  /** The empty stock key; `reason` says why, for humans. */
  | { valid: false; reason: string };

const keyMembers = ['item', 'location'] as const;

export function decodeRecordKey(bytes: Uint8Array | null): DecodedKey {
  if (bytes === null) return invalid('missing key (null)');
  if (bytes.length === 0) return invalid('empty key');
  const decoded = decodeStrictJson(bytes);
  if (!decoded.ok) return invalid(decoded.detail);
  const root = decoded.value;
  if (root.type !== 'object') return invalid(`not a JSON object but ${describeJsonType(root)}`);
  for (const name of root.members.keys()) {
    if (name !== 'item' && name !== 'location') return invalid(`unknown member ${JSON.stringify(name)}`);
  }
  const values: string[] = [];
  for (const name of keyMembers) {
    const member = root.members.get(name);
    if (member === undefined) return invalid(`missing member "${name}"`);
    if (member.type !== 'string') return invalid(`member "${name}" is ${describeJsonType(member)}, not a string`);
    values.push(member.value);
  }
  const [item, location] = values as [string, string];
  return { valid: true, item, location };
}

function invalid(reason: string): DecodedKey {
  return { valid: false, reason: `invalid key: ${reason}` };
}
