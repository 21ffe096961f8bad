/**
 * A reader that stops reading (`| head -1`, `| true`) ends a command quietly, as Unix tools
 * end: no stack trace, no diagnostic, exit 141 (128 + SIGPIPE) under `set -o pipefail`
 * (closed-pipe.ts). A write that fails (`> /dev/full`: ENOSPC) is one line and exit 1, for
 * every command through the same path. simulate needs neither broker nor database; export's
 * case is in rebuild-and-recover.test.ts, where a namespace with decisions exists.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pipeInto, repoRoot, requireBuild, runTimeoutMs } from '../support/amendsctl-process.js';

const scratch = mkdtempSync(join(tmpdir(), 'amends-test-closed-pipe-'));
const manifest = {
  source_topic: 'closed-pipe',
  config: {
    namespace: 'closed-pipe',
    schema_version: 1,
    ledger_origin: '2026-03-01',
    partitions: 1,
    stock_keys: [{ item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 }],
    source_incarnation: `kafka:${'0123456789abcdef'.repeat(2)}`,
  },
};

let manifestPath: string;
let recordsPath: string;

beforeAll(() => {
  requireBuild();
  manifestPath = join(scratch, 'manifest.json');
  writeFileSync(manifestPath, JSON.stringify(manifest));
  // 20,000 posts: far more output than a pipe buffers, so the writer meets the closed end.
  const lines = Array.from({ length: 20_000 }, (_, i) =>
    JSON.stringify({
      key: { item: 'widget', location: 'berlin' },
      value: {
        schema: 1,
        txn: `T${i}`,
        rev: 1,
        op: 'post',
        item: 'widget',
        location: 'berlin',
        day: '2026-03-02',
        qty: 1,
      },
    }),
  );
  recordsPath = join(scratch, 'records.jsonl');
  writeFileSync(recordsPath, `${lines.join('\n')}\n`);
});

describe('a closed stdout', () => {
  it('ends simulate | head -1 quietly with 141 after the first line', () => {
    const result = pipeInto(['simulate', '--manifest', manifestPath, '--file', recordsPath], 'head -1');
    expect(result.stderr).toBe('');
    expect(result.status).toBe('status 141 0');
    expect(result.stdout).toMatch(/^\{"type":"decision","partition":0,"offset":0,.*\}\n$/);
  });

  it('ends simulate | true (a reader that never reads) quietly', () => {
    const result = pipeInto(['simulate', '--manifest', manifestPath, '--file', recordsPath], 'true');
    expect(result.stderr).toBe('');
    expect(result.status).toBe('status 141 0');
  });
});

/** Runs `./bin/amendsctl ARGS > /dev/full` (every write fails with ENOSPC). */
function intoFullDevice(args: string[]) {
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', './bin/amendsctl "$@" > /dev/full', '--', ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: runTimeoutMs,
  });
  return { code: result.status, stderr: result.stderr };
}

describe('a stdout whose writes fail (ENOSPC)', () => {
  it('ends simulate with one line naming the error, exit 1', () => {
    const result = intoFullDevice(['simulate', '--manifest', manifestPath, '--file', recordsPath]);
    expect(result.stderr).toBe('amendsctl simulate: writing to stdout failed: ENOSPC (no space left on device)\n');
    expect(result.code).toBe(1);
  });

  it('ends help the same way, before any command is chosen', () => {
    const result = intoFullDevice(['--help']);
    expect(result.stderr).toBe('amendsctl: writing to stdout failed: ENOSPC (no space left on device)\n');
    expect(result.code).toBe(1);
  });
});
