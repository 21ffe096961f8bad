/**
 * The package version, read from package.json (never a literal that drifts from it).
 * Both the built entry (dist/cli/) and the sources (src/cli/) sit two folders below it.
 */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function packageVersion(): string {
  if (cached === undefined) {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    const version = (JSON.parse(text) as { version?: unknown }).version;
    cached = typeof version === 'string' ? version : 'unknown';
  }
  return cached;
}
