/**
 * Fixture lines, `{"key":{"item":…,"location":…},"value":{…}}`, as `source-load`
 * publishes them and `simulate` reads them (docs/design.md#commands).
 *
 * The key must be a stock key of the configuration (a listed one, or any valid key under a
 * default rule); it is routed as the configuration says (stock-key-terms.ts).
 * The value must be an object but is deliberately *not* judged as an envelope: SCHEMA or
 * CONFLICT cases can be loaded on purpose, and the worker decides them.
 *
 * Key and value are published as the canonical JSON (RFC 8785) of the line's objects,
 * UTF-8 encoded. Canonical JSON writes numbers as JavaScript does, so a number's lexeme
 * is not preserved: `1.0` and `1E0` become `1`, `1e2` becomes `100`, `-0` becomes `0`, and
 * integers beyond 2^53 round to the nearest double. A fixture line therefore cannot carry
 * a non-plain integer lexeme (a SCHEMA case such as `"rev":1.0`); use a raw record line
 * (raw-record-line.ts) with `value_b64` for that. Numbers outside the double range are
 * rejected. Whitespace, member order and escapes are normalised the same way.
 */

import { invalidInput } from '../kernel/amends-error.js';
import { canonicalJson } from './canonical-json.js';
import type { NamespaceConfig } from './config.js';
import { splitInputLines } from './input-lines.js';
import { stockKeyTerms } from './stock-key-terms.js';
import { describeJsonType, type JsonNode, jsonDepthMax, parseStrictJsonText, toPlainJson } from './strict-json.js';

export interface EncodedFixtureLine {
  line: number;
  partition: number;
  key: Uint8Array;
  value: Uint8Array;
}

/** The line's wrapper object adds one level, so a value may nest as deep as an envelope may. */
export const fixtureLineDepthMax = jsonDepthMax + 1;

const utf8 = new TextEncoder();

/**
 * Validates one fixture line per docs/design.md#source-load: a JSON object with `key` and `value`
 * objects (and nothing else), the key a stock key ({item, location} strings);
 * encodes key and value as canonical JSON UTF-8 bytes; partition as the config routes the key.
 * Throws AmendsError invalidInput(`line N: reason`).
 */
export function encodeFixtureLine(text: string, line: number, config: NamespaceConfig): EncodedFixtureLine {
  const parsed = parseStrictJsonText(text, { depthMax: fixtureLineDepthMax });
  if (!parsed.ok) throw invalidInput(`line ${line}: not strict JSON: ${parsed.detail}`);
  return encodeFixtureNode(parsed.value, line, config);
}

/**
 * Validates a whole file's text: every line (blank lines are errors except a final
 * newline); returns all encoded lines or throws on the first invalid line with its number.
 */
export function encodeFixtureFile(text: string, config: NamespaceConfig): EncodedFixtureLine[] {
  return splitInputLines(text).map(({ line, text: lineText }) => encodeFixtureLine(lineText, line, config));
}

/** The same checks on an already parsed line (simulate parses once to tell line kinds apart). */
export function encodeFixtureNode(root: JsonNode, line: number, config: NamespaceConfig): EncodedFixtureLine {
  const fail = (reason: string) => invalidInput(`line ${line}: ${reason}`);
  if (root.type !== 'object') throw fail(`a fixture line must be a JSON object, got ${describeJsonType(root)}`);
  for (const name of root.members.keys()) {
    if (name !== 'key' && name !== 'value')
      throw fail(`unknown member ${JSON.stringify(name)} (expected key and value)`);
  }
  const key = root.members.get('key');
  const value = root.members.get('value');
  if (key === undefined) throw fail('missing member "key"');
  if (value === undefined) throw fail('missing member "value"');
  if (key.type !== 'object') throw fail(`key must be an object, got ${describeJsonType(key)}`);
  for (const name of key.members.keys()) {
    if (name !== 'item' && name !== 'location') {
      throw fail(`key has unknown member ${JSON.stringify(name)} (expected item and location)`);
    }
  }
  const item = key.members.get('item');
  const location = key.members.get('location');
  if (item?.type !== 'string') throw fail('key.item must be a string');
  if (location?.type !== 'string') throw fail('key.location must be a string');
  const stockKey = stockKeyTerms(config, item.value, location.value);
  if (stockKey === undefined) {
    throw fail(`key (${JSON.stringify(item.value)}, ${JSON.stringify(location.value)}) is not a configured stock key`);
  }
  if (value.type !== 'object') throw fail(`value must be an object, got ${describeJsonType(value)}`);
  const outOfRange = firstNonFiniteNumber(value);
  if (outOfRange !== undefined) throw fail(`number ${outOfRange} is outside the range of a JSON double`);
  return {
    line,
    partition: stockKey.partition,
    key: utf8.encode(canonicalJson({ item: item.value, location: location.value })),
    value: utf8.encode(canonicalJson(toPlainJson(value))),
  };
}

function firstNonFiniteNumber(node: JsonNode): string | undefined {
  switch (node.type) {
    case 'number':
      return Number.isFinite(Number(node.lexeme)) ? undefined : node.lexeme;
    case 'object':
      for (const child of node.members.values()) {
        const found = firstNonFiniteNumber(child);
        if (found !== undefined) return found;
      }
      return undefined;
    case 'array':
      for (const child of node.items) {
        const found = firstNonFiniteNumber(child);
        if (found !== undefined) return found;
      }
      return undefined;
    default:
      return undefined;
  }
}
