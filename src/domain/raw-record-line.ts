/**
 * Raw record lines for `simulate` (docs/design.md#commands):
 * `{"partition":P,"offset":O,"key_b64":…|null,"value_b64":…|null}` — exact bytes,
 * so that garbage, BOMs, invalid UTF-8 and non-canonical JSON can be simulated.
 * Base64 is strict standard base64 with padding: what Buffer would re-encode identically.
 */

import { invalidInput } from '../kernel/amends-error.js';
import type { NamespaceConfig } from './config.js';
import { describeJsonType, type JsonNode, parseStrictJsonText, plainInteger } from './strict-json.js';

export interface RawRecordLine {
  line: number;
  partition: number;
  offset: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

const rawMembers = new Set(['partition', 'offset', 'key_b64', 'value_b64']);
const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function parseRawRecordLine(text: string, line: number, config: NamespaceConfig): RawRecordLine {
  const parsed = parseStrictJsonText(text);
  if (!parsed.ok) throw invalidInput(`line ${line}: not strict JSON: ${parsed.detail}`);
  return rawRecordFromNode(parsed.value, line, config);
}

/** The same checks on an already parsed line. Offsets are checked against each other by the caller. */
export function rawRecordFromNode(root: JsonNode, line: number, config: NamespaceConfig): RawRecordLine {
  const fail = (reason: string) => invalidInput(`line ${line}: ${reason}`);
  if (root.type !== 'object') throw fail(`a raw record line must be a JSON object, got ${describeJsonType(root)}`);
  for (const name of root.members.keys()) {
    if (!rawMembers.has(name)) throw fail(`unknown member ${JSON.stringify(name)}`);
  }
  for (const name of rawMembers) if (!root.members.has(name)) throw fail(`missing member "${name}"`);
  const partition = integer(root.members.get('partition'), 'partition', 0, config.partitions - 1, fail);
  const offset = integer(root.members.get('offset'), 'offset', 0, Number.MAX_SAFE_INTEGER, fail);
  return {
    line,
    partition,
    offset,
    key: bytes(root.members.get('key_b64'), 'key_b64', fail),
    value: bytes(root.members.get('value_b64'), 'value_b64', fail),
  };
}

function integer(
  node: JsonNode | undefined,
  name: string,
  min: number,
  max: number,
  fail: (reason: string) => Error,
): number {
  const value = node?.type === 'number' ? plainInteger(node.lexeme) : undefined;
  if (value === undefined || value < BigInt(min) || value > BigInt(max)) {
    throw fail(`${name} must be an integer within [${min}, ${max}]`);
  }
  return Number(value);
}

function bytes(node: JsonNode | undefined, name: string, fail: (reason: string) => Error): Uint8Array | null {
  if (node?.type === 'null') return null;
  if (node?.type !== 'string') throw fail(`${name} must be a base64 string or null`);
  const decoded = Buffer.from(node.value, 'base64');
  if (!base64Pattern.test(node.value) || decoded.toString('base64') !== node.value) {
    throw fail(`${name} is not strict standard base64`);
  }
  return new Uint8Array(decoded);
}
