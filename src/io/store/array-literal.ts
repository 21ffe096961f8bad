/**
 * PostgreSQL array literals for the batch statement's `unnest` parameters, written directly.
 *
 * node-postgres turns a JS array parameter into a literal itself, but it quotes every element,
 * numbers included, and runs two regular-expression replacements on each one: a worker's CPU
 * profile at batch 500 spent 2.0 s of ~16 s busy there (a dozen arrays of 500 per batch). These
 * write the same values in the literal syntax PostgreSQL's array input reads (`array_in`):
 * NULL unquoted, text double-quoted with `"` and `\` escaped by a backslash, integers and
 * booleans bare; bytea[] goes in the binary array format instead (see there). A test
 * round-trips random values through the real server.
 */

/** `{1,NULL,3}`: safe integers only (bigint and int columns). */
export function integerArray(values: readonly (number | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null || v === undefined) out += 'NULL';
    else if (Number.isSafeInteger(v)) out += String(v);
    else throw new TypeError(`integerArray: ${v} is not a safe integer`);
  }
  return `${out}}`;
}

/** `{t,f,NULL}`. */
export function booleanArray(values: readonly (boolean | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    out += v === null || v === undefined ? 'NULL' : v ? 't' : 'f';
  }
  return `${out}}`;
}

const needsEscape = /["\\]/;
const escaped = /["\\]/g;

/** `{"a","b \"c\"",NULL}`: every text element quoted, so "NULL", "" and spaces stay text. */
export function textArray(values: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null || v === undefined) out += 'NULL';
    else out += `"${needsEscape.test(v) ? v.replace(escaped, '\\$&') : v}"`;
  }
  return `${out}}`;
}

/** PostgreSQL's type oid of bytea (pg_type), the element type a binary bytea[] names. */
const byteaOid = 17;
/** The binary array header: dimensions, null flag, element type, then length and lower bound. */
const binaryArrayHeaderBytes = 20;

/**
 * bytea[] in PostgreSQL's binary array format (`array_recv`), as a Buffer, which node-postgres
 * sends as a binary parameter: the raw bytes go on the wire as they are, where the text form
 * doubled them as hex (the worker's hex encoding alone was 0.4 s of ~16 s busy, and the server
 * decoded it again). The statement's `$n::bytea[]` cast gives the element type it checks.
 */
export function byteaArray(values: readonly (Uint8Array | null)[]): Buffer {
  let size = binaryArrayHeaderBytes;
  let hasNull = 0;
  for (const v of values) {
    if (v === null || v === undefined) hasNull = 1;
    size += 4 + (v?.byteLength ?? 0);
  }
  const out = Buffer.allocUnsafe(size);
  out.writeInt32BE(1, 0);
  out.writeInt32BE(hasNull, 4);
  out.writeInt32BE(byteaOid, 8);
  out.writeInt32BE(values.length, 12);
  out.writeInt32BE(1, 16);
  let at = binaryArrayHeaderBytes;
  for (const v of values) {
    if (v === null || v === undefined) {
      out.writeInt32BE(-1, at);
      at += 4;
      continue;
    }
    out.writeInt32BE(v.byteLength, at);
    out.set(v, at + 4);
    at += 4 + v.byteLength;
  }
  return out;
}
