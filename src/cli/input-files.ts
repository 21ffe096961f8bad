/**
 * Reading the files a command is pointed at (manifest, fixture or simulation input).
 * Every failure is one line naming the file, as an invalid-input error (exit 1).
 * The path `-` is standard input (as for cat and kcat), readable once per process.
 */
import { readFile } from 'node:fs/promises';
import { type Manifest, parseManifest } from '../domain/config.js';
import { decodeUtf8, parseStrictJsonText } from '../domain/strict-json.js';
import { invalidInput, usageError } from '../kernel/amends-error.js';
import { errorMessage } from '../kernel/error-message.js';

export const standardInputPath = '-';
let standardInputRead = false;

/** How diagnostics name a path: `-` is "standard input". */
export function inputName(path: string): string {
  return path === standardInputPath ? 'standard input' : path;
}

async function readStandardInput(what: string): Promise<Uint8Array> {
  if (standardInputRead) throw usageError(`${what}: standard input was read already: only one file may be -`);
  standardInputRead = true;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function readInputBytes(path: string, what: string): Promise<Uint8Array> {
  if (path === standardInputPath) return readStandardInput(what);
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw invalidInput(`${what} ${path}: no such file`);
    if (code === 'EISDIR') throw invalidInput(`${what} ${path}: is a directory, not a file`);
    if (code === 'EACCES') throw invalidInput(`${what} ${path}: permission denied`);
    throw invalidInput(`${what} ${path}: cannot be read (${code ?? errorMessage(error)})`);
  }
}

/** The file as UTF-8 text; invalid UTF-8 is an error (never replaced with U+FFFD). */
export async function readInputText(path: string, what: string): Promise<string> {
  const text = decodeUtf8(await readInputBytes(path, what));
  if (text === undefined) throw invalidInput(`${what} ${inputName(path)}: not valid UTF-8`);
  return text;
}

/**
 * A JSON file's value; not JSON is one line naming the file. V8's message quotes the start
 * of the text, newlines included, which the one-line diagnostic would cut mid-quote: control
 * characters are escaped as in JSON.
 */
export async function readJsonFile(path: string, what: string): Promise<unknown> {
  const text = await readInputText(path, what);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped here
    const reason = errorMessage(error).replace(/[\u0000-\u001f]/g, (c) => JSON.stringify(c).slice(1, -1));
    throw invalidInput(`${what} ${inputName(path)}: not valid JSON (${reason})`);
  }
  refuseDuplicateMembers(text, `${what} ${inputName(path)}`);
  return value;
}

/**
 * JSON.parse keeps the last of two members with one name, so a configuration that says
 * `"opening"` twice would be read as whichever came last: refused instead (issue 35), found
 * by the strict decoder that judges envelopes (strict-json.ts), which names the member and
 * where it is.
 */
function refuseDuplicateMembers(text: string, what: string): void {
  const strict = parseStrictJsonText(text);
  if (!strict.ok && strict.detail.startsWith('duplicate member')) {
    const where = strict.path ? ` in ${strict.path}` : ' at the top level';
    throw invalidInput(`${what}: ${strict.detail.replace(/ at byte /, `${where} at byte `)}: say each member once`);
  }
}

export async function readManifestFile(path: string): Promise<Manifest> {
  return parseManifest(await readJsonFile(path, 'manifest'), `manifest ${inputName(path)}`);
}
