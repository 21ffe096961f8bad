/**
 * `--file -` reads standard input (cli.md), as cat and kcat do: simulate and source-load
 * give the same result as with the file's path; standard input is read once per process.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { deleteTestTopics, endOffsets } from '../support/kafka-test-tools.js';

const scratch = mkdtempSync(join(tmpdir(), 'amends-test-stdin-'));
const env = { PATH: process.env.PATH ?? '', AMENDS_BROKERS: testBrokers, AMENDS_DATABASE_URL: testDatabaseUrl };
const before = join(repoRoot, 'fixtures', 'before.jsonl');
const ownTopics = new Set<string>();

/** The built amendsctl with `input` on its standard input. */
function withInput(args: string[], input: string) {
  const result = spawnSync(process.execPath, [join(repoRoot, 'bin/amendsctl'), ...args], {
    cwd: repoRoot,
    env,
    input,
    encoding: 'utf8',
    timeout: 45_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

let manifestPath: string;

beforeAll(async () => {
  requireBuild();
  const topic = testName();
  ownTopics.add(topic);
  const created = await runAmendsctl(['source-create', '--namespace', testName(), '--topic', topic], env);
  expect(created.code, created.stderr).toBe(0);
  manifestPath = join(scratch, 'manifest.json');
  writeFileSync(manifestPath, created.stdout);
});
afterAll(() => deleteTestTopics(ownTopics));

describe('--file -', () => {
  it('simulate reads the records from standard input', async () => {
    const fromPath = await runAmendsctl(['simulate', '--manifest', manifestPath, '--file', before]);
    expect(fromPath.code).toBe(0);
    const fromInput = withInput(['simulate', '--manifest', manifestPath, '--file', '-'], readFileSync(before, 'utf8'));
    expect(fromInput.stderr).toBe('');
    expect(fromInput.code).toBe(0);
    expect(fromInput.stdout).toBe(fromPath.stdout);
  });

  it('source-load publishes the lines of standard input', async () => {
    const text = readFileSync(before, 'utf8');
    const loaded = withInput(['source-load', '--manifest', manifestPath, '--file', '-'], text);
    expect(loaded.code, loaded.stderr).toBe(0);
    const count = text.trimEnd().split('\n').length;
    expect(loaded.stdout.trimEnd().split('\n')).toHaveLength(count);
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    expect(await endOffsets(manifest.source_topic, 2)).toEqual([count, 0]);
  });

  it('reads standard input once: a second - is a usage error', () => {
    const result = withInput(['simulate', '--manifest', '-', '--file', '-'], readFileSync(manifestPath, 'utf8'));
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'amendsctl simulate: file: standard input was read already: only one file may be - (see amendsctl simulate --help)\n',
    );
  });
});
