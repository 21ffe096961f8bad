/**
 * The oracle's own strict JSON reader (docs/design.md#record-key, #envelope), written apart from the worker's
 * (src/domain/strict-json.ts) so that a decoding bug in one shows up as a difference instead
 * of being repeated by the verifier. It reads text that is already valid UTF-8 and rejects:
 * duplicate member names (compared after unescaping), unpaired surrogate escapes, unescaped
 * control characters in strings, more than `jsonDepthMax` nested containers (the top level
 * counts as one), anything but exactly one value with only JSON whitespace around it.
 *
 * Numbers keep their lexeme, so a caller can tell `1` from `1.0` or `1e0`.
 */

/** docs/design.md#envelope: at most 64 nested objects and arrays. */
export const jsonDepthMax = 64;

export type OracleJson =
  | { kind: 'object'; members: Map<string, OracleJson> }
  | { kind: 'array' }
  | { kind: 'string'; text: string }
  | { kind: 'number'; lexeme: string }
  | { kind: 'boolean' }
  | { kind: 'null' };

/**
 * Thrown for any text that is not strict JSON; the oracle only needs to know that it is not.
 * Not an Error on purpose: garbage records are common, and an Error captures a stack trace.
 */
export class NotStrictJson {
  constructor(readonly reason: string) {}
}

const numberLexeme = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const hexDigits = /^[0-9a-fA-F]{4}$/;
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

/** Parses `text` as exactly one strict JSON value. */
export function parseStrictJson(text: string): OracleJson {
  const reader = new Reader(text);
  reader.skipSpace();
  const value = reader.value(0);
  reader.skipSpace();
  if (reader.at < text.length) throw new NotStrictJson('trailing data');
  return value;
}

class Reader {
  at = 0;
  constructor(private readonly text: string) {}

  skipSpace(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.at);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.at++;
      else return;
    }
  }

  /** `depth`: containers around this value. */
  value(depth: number): OracleJson {
    const c = this.text[this.at];
    if (c === '{') return this.object(depth + 1);
    if (c === '[') return this.array(depth + 1);
    if (c === '"') return { kind: 'string', text: this.string() };
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    for (const [word, node] of literals) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return node;
      }
    }
    throw new NotStrictJson(`unexpected ${c === undefined ? 'end' : JSON.stringify(c)}`);
  }

  private object(depth: number): OracleJson {
    if (depth > jsonDepthMax) throw new NotStrictJson('nested too deep');
    this.at++;
    const members = new Map<string, OracleJson>();
    this.skipSpace();
    if (this.text[this.at] === '}') {
      this.at++;
      return { kind: 'object', members };
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.at] !== '"') throw new NotStrictJson('member name expected');
      const name = this.string();
      if (members.has(name)) throw new NotStrictJson('duplicate member');
      this.skipSpace();
      this.expect(':');
      this.skipSpace();
      members.set(name, this.value(depth));
      this.skipSpace();
      if (this.text[this.at] === '}') {
        this.at++;
        return { kind: 'object', members };
      }
      this.expect(',');
    }
  }

  private array(depth: number): OracleJson {
    if (depth > jsonDepthMax) throw new NotStrictJson('nested too deep');
    this.at++;
    this.skipSpace();
    if (this.text[this.at] === ']') {
      this.at++;
      return { kind: 'array' };
    }
    for (;;) {
      this.skipSpace();
      this.value(depth);
      this.skipSpace();
      if (this.text[this.at] === ']') {
        this.at++;
        return { kind: 'array' };
      }
      this.expect(',');
    }
  }

  private number(): OracleJson {
    numberLexeme.lastIndex = this.at;
    const m = numberLexeme.exec(this.text);
    if (!m) throw new NotStrictJson('bad number');
    this.at += m[0].length;
    return { kind: 'number', lexeme: m[0] };
  }

  /** A string starting at the opening quote, unescaped. */
  private string(): string {
    this.at++;
    let out = '';
    let runStart = this.at;
    for (;;) {
      const code = this.text.charCodeAt(this.at);
      if (Number.isNaN(code)) throw new NotStrictJson('unterminated string');
      if (code < 0x20) throw new NotStrictJson('control character in a string');
      if (code === 0x22) {
        out += this.text.slice(runStart, this.at);
        this.at++;
        return out;
      }
      if (code !== 0x5c) {
        this.at++;
        continue;
      }
      out += this.text.slice(runStart, this.at);
      out += this.escape();
      runStart = this.at;
    }
  }

  /** One escape sequence at the backslash; a surrogate escape must come as a high-low pair. */
  private escape(): string {
    const c = this.text[this.at + 1];
    if (c !== undefined && c in simpleEscapes) {
      this.at += 2;
      return simpleEscapes[c] as string;
    }
    if (c !== 'u') throw new NotStrictJson('bad escape');
    const unit = this.hex(this.at + 2);
    this.at += 6;
    if (unit >= 0xdc00 && unit <= 0xdfff) throw new NotStrictJson('unpaired low surrogate');
    if (unit < 0xd800 || unit > 0xdbff) return String.fromCharCode(unit);
    if (this.text[this.at] !== '\\' || this.text[this.at + 1] !== 'u')
      throw new NotStrictJson('unpaired high surrogate');
    const low = this.hex(this.at + 2);
    if (low < 0xdc00 || low > 0xdfff) throw new NotStrictJson('unpaired high surrogate');
    this.at += 6;
    return String.fromCharCode(unit, low);
  }

  private hex(from: number): number {
    const digits = this.text.slice(from, from + 4);
    if (!hexDigits.test(digits)) throw new NotStrictJson('bad \\u escape');
    return Number.parseInt(digits, 16);
  }

  private expect(c: string): void {
    if (this.text[this.at] !== c) throw new NotStrictJson(`${c} expected`);
    this.at++;
  }
}

const literals: [string, OracleJson][] = [
  ['true', { kind: 'boolean' }],
  ['false', { kind: 'boolean' }],
  ['null', { kind: 'null' }],
];
