/**
 * Registering a namespace the way a user's first write does: `amendsctl source-load` of one
 * record with AMENDS_DATABASE_URL set. Tests of the commands that refuse a registered
 * namespace (source-create, source-adopt) start from here, and it shows on the way that the
 * manifest they printed is one the rest of the tooling takes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runAmendsctl } from './amendsctl-process.js';

/** One ledger line of the default configuration (widget@berlin). */
export const sampleLine = {
  key: { item: 'widget', location: 'berlin' },
  value: { schema: 1, txn: 'T1', rev: 1, op: 'post', item: 'widget', location: 'berlin', day: '2026-03-02', qty: -30 },
};

/**
 * Saves `manifestText` under `dir` as NAMESPACE.manifest.json, loads `sampleLine` through it
 * (which registers the namespace) and returns the manifest's path.
 */
export async function registerByLoading(
  manifestText: string,
  namespace: string,
  dir: string,
  env: Record<string, string>,
): Promise<string> {
  const manifest = join(dir, `${namespace}.manifest.json`);
  writeFileSync(manifest, manifestText);
  const fixture = join(dir, `${namespace}.jsonl`);
  writeFileSync(fixture, `${JSON.stringify(sampleLine)}\n`);
  const loaded = await runAmendsctl(['source-load', '--manifest', manifest, '--file', fixture], env);
  expect(loaded.code, loaded.stderr).toBe(0);
  return manifest;
}
