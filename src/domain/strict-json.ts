/**
 * Strict JSON decoding for record keys, envelopes and input lines (docs/design.md#record-key, #envelope).
 *
 * Hand-written recursive descent on purpose: `JSON.parse` silently keeps the last of
 * duplicate members, forgets how a number was written (`1.0` and `1` look the same) and
 * accepts unpaired surrogate escapes (`"\ud800"`) — all three are verdicts here.
 *
 * Rejected: invalid UTF-8, a leading byte-order mark, anything but exactly one JSON value
 * (with optional JSON whitespace around it), duplicate member names compared after
 * unescaping (at any depth), unpaired surrogate escapes, unescaped U+0000–U+001F inside
 * strings (RFC 8259's "characters that must be escaped"), and more than `depthMax` nested
 * objects and arrays (the top-level container counts as one).
 *
 * U+007F–U+009F are legal JSON inside strings, raw or escaped; docs/design.md#envelope counts them as
 * control characters only in the member rules (item, location → SCHEMA), so decoding keeps them.
 */

/** docs/design.md#envelope: "more than 64 nested objects and arrays (the top-level object counts as one)". */
export const jsonDepthMax = 64;

/** A decoded JSON value that still knows how each number was written. */
export type JsonNode =
  | { type: 'object'; members: Map<string, JsonNode> }
  | { type: 'array'; items: JsonNode[] }
  | { type: 'string'; value: string }
  /** `lexeme` is the number exactly as written (`1.0`, `-0`, `1e2`). */
  | { type: 'number'; lexeme: string }
  | { type: 'boolean'; value: boolean }
  | { type: 'null' };

/** A refusal's `path`: where in the document it was found (`stock_keys[1]`; empty at the top level). */
export type StrictJsonResult = { ok: true; value: JsonNode } | { ok: false; detail: string; path?: string };

export interface StrictJsonOptions {
  /** Deepest allowed nesting of objects and arrays; the top-level container is depth 1. */
  depthMax?: number;
}

// `fatal` rejects invalid UTF-8 (overlong forms, encoded surrogates, truncation);
// `ignoreBOM` keeps a leading U+FEFF in the text so that we can reject it ourselves.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const byteOrderMark = 0xfeff;

/** UTF-8 bytes to text, or undefined when the bytes are not valid UTF-8. A BOM is kept. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Decodes raw bytes: UTF-8 first, then the strict grammar. */
export function decodeStrictJson(bytes: Uint8Array, options?: StrictJsonOptions): StrictJsonResult {
  const text = decodeUtf8(bytes);
  if (text === undefined) return { ok: false, detail: 'not valid UTF-8' };
  return parseStrictJsonText(text, options);
}

// In a `u` regular expression a surrogate range matches only surrogates that are not part of a pair.
const loneSurrogate = /[\uD800-\uDFFF]/u;

/** Parses already-decoded text with the same strictness (used for input file lines). */
export function parseStrictJsonText(text: string, options?: StrictJsonOptions): StrictJsonResult {
  if (text.charCodeAt(0) === byteOrderMark) return { ok: false, detail: 'starts with a byte-order mark' };
  const lone = loneSurrogate.exec(text);
  if (lone) return { ok: false, detail: `unpaired surrogate at byte ${byteOffset(text, lone.index)}` };
  const parser = new Parser(text, options?.depthMax ?? jsonDepthMax);
  try {
    return { ok: true, value: parser.document() };
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      return {
        ok: false,
        detail: `${error.message} at byte ${byteOffset(text, error.position)}`,
        path: pathText(error.path),
      };
    }
    throw error;
  }
}

/** The integer a number lexeme denotes when it is a plain JSON integer `-?(0|[1-9][0-9]*)`; `-0` is 0. */
export function plainInteger(lexeme: string): bigint | undefined {
  return plainIntegerPattern.test(lexeme) ? BigInt(lexeme) : undefined;
}
const plainIntegerPattern = /^-?(?:0|[1-9][0-9]*)$/;

/** A short description of a node's kind for diagnostics ("a string", "null"). */
export function describeJsonType(node: JsonNode): string {
  switch (node.type) {
    case 'object':
      return 'an object';
    case 'array':
      return 'an array';
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'null':
      return 'null';
  }
}

/**
 * Converts a node back to a plain JavaScript value. Numbers become JavaScript numbers
 * (`1.0` → 1, `-0` → 0, large integers round to the nearest double); a number outside the
 * double range becomes ±Infinity, which callers must reject before serialising.
 */
export function toPlainJson(node: JsonNode): unknown {
  switch (node.type) {
    case 'object':
      // fromEntries defines own properties, so a member named "__proto__" stays a member.
      return Object.fromEntries([...node.members].map(([name, value]) => [name, toPlainJson(value)]));
    case 'array':
      return node.items.map(toPlainJson);
    case 'string':
    case 'boolean':
      return node.value;
    case 'number': {
      const n = Number(node.lexeme);
      return Object.is(n, -0) ? 0 : n;
    }
    case 'null':
      return null;
  }
}

class JsonSyntaxError extends Error {
  /** The members and indexes from the document down to where it was found, added as the error unwinds. */
  readonly path: (string | number)[] = [];

  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
  }
}

/** `config.stock_keys[1]`: a path as a reader writes it (names that are not identifiers quoted). */
function pathText(path: readonly (string | number)[]): string {
  return path
    .map((step) =>
      typeof step === 'number'
        ? `[${step}]`
        : /^[A-Za-z_][A-Za-z0-9_]*$/.test(step)
          ? `.${step}`
          : `[${JSON.stringify(step)}]`,
    )
    .join('')
    .replace(/^\./, '');
}

/** `error`, with `step` added to its path when it was found inside the value at `step`. */
function inside(error: unknown, step: string | number): unknown {
  if (error instanceof JsonSyntaxError) error.path.unshift(step);
  return error;
}

function byteOffset(text: string, position: number): number {
  return new TextEncoder().encode(text.slice(0, position)).length;
}

const numberPattern = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const hex4Pattern = /^[0-9a-fA-F]{4}$/;
const simpleEscapes: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

class Parser {
  private pos = 0;

  constructor(
    private readonly text: string,
    private readonly depthMax: number,
  ) {}

  document(): JsonNode {
    this.skipWhitespace();
    if (this.pos >= this.text.length) throw new JsonSyntaxError('no JSON value', this.pos);
    const value = this.value(0);
    this.skipWhitespace();
    if (this.pos < this.text.length) throw new JsonSyntaxError('trailing data after the JSON value', this.pos);
    return value;
  }

  private skipWhitespace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.pos++;
    }
  }

  /** `depth` is the number of containers around this value. */
  private value(depth: number): JsonNode {
    const c = this.text[this.pos];
    switch (c) {
      case '{':
        return this.object(depth + 1);
      case '[':
        return this.array(depth + 1);
      case '"':
        return { type: 'string', value: this.string() };
      case 't':
        return this.literal('true', { type: 'boolean', value: true });
      case 'f':
        return this.literal('false', { type: 'boolean', value: false });
      case 'n':
        return this.literal('null', { type: 'null' });
      default:
        return this.number();
    }
  }

  private enter(depth: number): void {
    if (depth > this.depthMax) {
      throw new JsonSyntaxError(`more than ${this.depthMax} nested objects and arrays`, this.pos);
    }
    this.pos++;
    this.skipWhitespace();
  }

  private object(depth: number): JsonNode {
    this.enter(depth);
    const members = new Map<string, JsonNode>();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return { type: 'object', members };
    }
    for (;;) {
      if (this.text[this.pos] !== '"') throw new JsonSyntaxError('expected a member name', this.pos);
      const namePos = this.pos;
      const name = this.string();
      if (members.has(name)) throw new JsonSyntaxError(`duplicate member ${JSON.stringify(name)}`, namePos);
      this.skipWhitespace();
      if (this.text[this.pos] !== ':') throw new JsonSyntaxError('expected ":"', this.pos);
      this.pos++;
      this.skipWhitespace();
      // try/catch rather than a closure: no allocation per member on the envelope's hot path.
      let member: JsonNode;
      try {
        member = this.value(depth);
      } catch (error) {
        throw inside(error, name);
      }
      members.set(name, member);
      this.skipWhitespace();
      const next = this.text[this.pos];
      this.pos++;
      if (next === '}') return { type: 'object', members };
      if (next !== ',') throw new JsonSyntaxError('expected "," or "}"', this.pos - 1);
      this.skipWhitespace();
    }
  }

  private array(depth: number): JsonNode {
    this.enter(depth);
    const items: JsonNode[] = [];
    if (this.text[this.pos] === ']') {
      this.pos++;
      return { type: 'array', items };
    }
    for (;;) {
      try {
        items.push(this.value(depth));
      } catch (error) {
        throw inside(error, items.length);
      }
      this.skipWhitespace();
      const next = this.text[this.pos];
      this.pos++;
      if (next === ']') return { type: 'array', items };
      if (next !== ',') throw new JsonSyntaxError('expected "," or "]"', this.pos - 1);
      this.skipWhitespace();
    }
  }

  private literal(word: string, node: JsonNode): JsonNode {
    if (!this.text.startsWith(word, this.pos)) throw new JsonSyntaxError('not a JSON value', this.pos);
    this.pos += word.length;
    return node;
  }

  private number(): JsonNode {
    numberPattern.lastIndex = this.pos;
    const m = numberPattern.exec(this.text);
    if (!m) throw new JsonSyntaxError('not a JSON value', this.pos);
    this.pos += m[0].length;
    return { type: 'number', lexeme: m[0] };
  }

  /** Reads a string starting at its opening quote; returns it unescaped. */
  private string(): string {
    const t = this.text;
    const start = this.pos;
    this.pos++;
    let out = '';
    let runStart = this.pos;
    for (;;) {
      if (this.pos >= t.length) throw new JsonSyntaxError('unterminated string', start);
      const c = t.charCodeAt(this.pos);
      if (c === 0x22) {
        out += t.slice(runStart, this.pos);
        this.pos++;
        return out;
      }
      if (c < 0x20) {
        throw new JsonSyntaxError(
          `unescaped control character U+${c.toString(16).padStart(4, '0').toUpperCase()} in a string`,
          this.pos,
        );
      }
      if (c === 0x5c) {
        out += t.slice(runStart, this.pos);
        out += this.escape();
        runStart = this.pos;
        continue;
      }
      this.pos++;
    }
  }

  /** Reads one escape sequence starting at its backslash. */
  private escape(): string {
    const escapePos = this.pos;
    const kind = this.text[this.pos + 1];
    if (kind === undefined) throw new JsonSyntaxError('unterminated string', escapePos);
    if (kind !== 'u') {
      const simple = simpleEscapes[kind];
      if (simple === undefined) throw new JsonSyntaxError(`invalid escape \\${kind}`, escapePos);
      this.pos += 2;
      return simple;
    }
    const unit = this.hex4(escapePos);
    if (unit >= 0xdc00 && unit <= 0xdfff) {
      throw new JsonSyntaxError('unpaired surrogate escape (a low surrogate first)', escapePos);
    }
    if (unit < 0xd800 || unit > 0xdbff) return String.fromCharCode(unit);
    // A high surrogate escape counts only when a low surrogate escape follows at once.
    if (this.text[this.pos] !== '\\' || this.text[this.pos + 1] !== 'u') {
      throw new JsonSyntaxError('unpaired surrogate escape', escapePos);
    }
    const low = this.hex4(this.pos);
    if (low < 0xdc00 || low > 0xdfff) throw new JsonSyntaxError('unpaired surrogate escape', escapePos);
    return String.fromCharCode(unit, low);
  }

  /** Reads `\uXXXX` at `at`, moving past it. */
  private hex4(at: number): number {
    const digits = this.text.slice(at + 2, at + 6);
    if (!hex4Pattern.test(digits)) throw new JsonSyntaxError('invalid \\u escape', at);
    this.pos = at + 6;
    return Number.parseInt(digits, 16);
  }
}
