/**
 * Canonical JSON per RFC 8785 (JSON Canonicalization Scheme) for the values amends
 * writes: objects, arrays, strings, finite numbers, booleans and null.
 *
 * Member names sort by UTF-16 code units, as RFC 8785 §3.2.3 says. (Every name amends
 * itself defines is ASCII, where that order equals code-point order.)
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [name: string]: JsonValue };

export function canonicalJson(value: unknown): string {
  return write(value, 0);
}

const depthMax = 1000;

function write(value: unknown, depth: number): string {
  if (depth > depthMax) throw new TypeError(`canonicalJson: nesting deeper than ${depthMax}`);
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${value} is not a JSON number`);
      // ECMAScript's Number serialisation is the one RFC 8785 §3.2.2.3 prescribes; -0 becomes 0.
      return JSON.stringify(value);
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v) => write(v, depth + 1)).join(',')}]`;
      const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${write(v, depth + 1)}`).join(',')}}`;
    }
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} is not JSON`);
  }
}

/** Compares strings by Unicode code points (= UTF-8 byte order = SQL COLLATE "C"). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}
