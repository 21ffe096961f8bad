/**
 * `amendsctl showcase` without the dashboard, interrupted with Ctrl-C (SIGINT) in its second
 * step: it stops every child process, says so, and leaves an ERROR report. The whole run (the
 * six steps with their owned faults, ending in the verifier's PASS, the report on disk, and no
 * child process left behind) is checked on the dashboard's run in showcase-tui.test.ts: the two
 * renderings run the same steps, and one full run per suite is enough (it was two, 40 s each).
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl } from '../support/endpoints.js';
import { showcaseRunDir, survivors } from '../support/showcase-report.js';

interface Run {
  child: ChildProcess;
  cwd: string;
  stdout: string;
  stderr: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startShowcase(): Run {
  requireBuild();
  const cwd = mkdtempSync(join(tmpdir(), 'amends-showcase-'));
  const child = spawn(process.execPath, [join(repoRoot, 'bin/amendsctl'), 'showcase'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', AMENDS_DATABASE_URL: testDatabaseUrl, AMENDS_BROKERS: testBrokers },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: Run = {
    child,
    cwd,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal }))),
  };
  child.stdout?.on('data', (c: Buffer) => {
    run.stdout += c.toString('utf8');
  });
  child.stderr?.on('data', (c: Buffer) => {
    run.stderr += c.toString('utf8');
  });
  return run;
}

describe('amendsctl showcase', () => {
  it('stops every child process and says so when interrupted (SIGINT)', async () => {
    const run = startShowcase();
    let ended = false;
    void run.exited.then(() => {
      ended = true;
    });
    const deadline = Date.now() + 120_000;
    while (!run.stderr.includes('step 2:')) {
      if (ended || Date.now() > deadline) throw new Error(`the showcase never reached step 2: ${run.stderr}`);
      await sleep(100);
    }
    const runDir = showcaseRunDir(run.cwd);
    run.child.kill('SIGINT');
    const exit = await run.exited;
    expect(exit).toEqual({ code: 130, signal: null });
    expect(run.stderr).toMatch(/interrupted/);
    const report = JSON.parse(readFileSync(join(runDir, 'report.json'), 'utf8'));
    expect(report.verdict).toBe('ERROR');
    expect(report.error).toMatch(/interrupted/);
    expect(report.children.length).toBeGreaterThanOrEqual(4);
    expect(survivors(report.children)).toEqual([]);
  }, 180_000);
});
