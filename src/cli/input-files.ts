/**
 * Reading the files a command is pointed at (manifest, fixture or simulation input).
 * Every failure is one line naming the file, as an invalid-input error (exit 1).
 */
import { readFile } from 'node:fs/promises';
import { invalidInput } from '../domain/amends-error.js';
import { type Manifest, parseManifest } from '../domain/config.js';
import { decodeUtf8 } from '../domain/strict-json.js';

export async function readInputBytes(path: string, what: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw invalidInput(`${what} ${path}: no such file`);
    if (code === 'EISDIR') throw invalidInput(`${what} ${path}: is a directory, not a file`);
    if (code === 'EACCES') throw invalidInput(`${what} ${path}: permission denied`);
    throw invalidInput(`${what} ${path}: cannot be read (${code ?? (error as Error).message})`);
  }
}

/** The file as UTF-8 text; invalid UTF-8 is an error (never replaced with U+FFFD). */
export async function readInputText(path: string, what: string): Promise<string> {
  const text = decodeUtf8(await readInputBytes(path, what));
  if (text === undefined) throw invalidInput(`${what} ${path}: not valid UTF-8`);
  return text;
}

export async function readManifestFile(path: string): Promise<Manifest> {
  const text = await readInputText(path, 'manifest');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalidInput(`manifest ${path}: not valid JSON (${(error as Error).message})`);
  }
  return parseManifest(value, `manifest ${path}`);
}
