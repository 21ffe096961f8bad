/**
 * `amendsctl showcase` end to end on the real stack (verification.md, Showcase): the six
 * steps with their owned faults, ending in the verifier's PASS, the report on disk, and no
 * child process left behind — also when it is interrupted with Ctrl-C (SIGINT).
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl } from '../support/endpoints.js';

const showcaseBudgetMs = 300_000;

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

function runDirOf(run: Run): string {
  const base = join(run.cwd, 'artifacts', 'showcase');
  const [only] = readdirSync(base);
  if (only === undefined) throw new Error(`no run directory under ${base}`);
  return join(base, only);
}

/** The report's children that still exist (meow renames a process, so its pid is the handle). */
function survivors(children: { name: string; pid: number }[]): string[] {
  return children.filter((c) => existsProcess(c.pid)).map((c) => `${c.name} (pid ${c.pid})`);
}

function existsProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function logLines(runDir: string, file: string): Record<string, unknown>[] {
  return readFileSync(join(runDir, file), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('amendsctl showcase', () => {
  it(
    'survives a SIGKILL, a SIGSTOP past the session, a lost COMMIT reply and a relay crash, and ends in PASS',
    async () => {
      const run = startShowcase();
      const exit = await run.exited;
      const runDir = runDirOf(run);
      expect(exit, run.stderr).toEqual({ code: 0, signal: null });
      expect(run.stdout).toMatch(/^showcase \S+: PASS$/m);

      const report = JSON.parse(readFileSync(join(runDir, 'report.json'), 'utf8'));
      expect(report.verdict).toBe('PASS');
      expect(report.faults.map((f: { kind: string }) => f.kind)).toEqual([
        'sigkill',
        'sigstop',
        'commit_reply_dropped',
        'relay_exit_after_publish',
      ]);
      for (const f of report.faults) {
        expect(f.recovered_at, f.kind).not.toBeNull();
        expect(Date.parse(f.recovered_at)).toBeGreaterThanOrEqual(Date.parse(f.injected_at));
      }
      expect(report.faults[1].observed).toMatch(/fenced/);
      expect(report.verify.verdict).toBe('PASS');
      expect(report.verify.differences).toEqual([]);
      expect(report.verify.counts.decisions).toBe(report.verify.counts.records);
      expect(report.verify.counts.records).toBeGreaterThan(6_000);
      expect(report.verify.counts.outbox_pending).toBe(0);
      expect(readFileSync(join(runDir, 'report.md'), 'utf8')).toMatch(/^# amends showcase \S+: PASS$/m);

      // The stopped worker's late call really was refused by the store, in its own log.
      const workerLogs = readdirSync(runDir).filter((f) => f.startsWith('worker-') && f.endsWith('.log'));
      const stoppedLog = workerLogs
        .map((f) => logLines(runDir, f))
        .find((lines) => lines.some((l) => l.msg === 'fault_resumed'));
      expect(stoppedLog, 'a worker log with fault_resumed').toBeDefined();
      const resumedAt = stoppedLog?.findIndex((l) => l.msg === 'fault_resumed') ?? -1;
      const lateCall = stoppedLog?.slice(resumedAt).find((l) => l.msg === 'process_attempt');
      expect(lateCall?.observation).toBe('fenced');

      // The restarted worker (same --instance-id) has a log of its own; the killed one ended.
      const killed = String(String(report.faults[0].target).split(' ')[0]);
      expect(workerLogs).toContain(`${killed}.restart-1.log`);
      // Two workers, the restart, relay, faulty relay, second relay, view: all stopped.
      expect(report.children.map((c: { name: string }) => c.name).sort()).toEqual(
        ['relay-1', 'relay-2', 'relay-fault', 'view-1', 'worker-a', 'worker-b', `${killed}.restart-1`].sort(),
      );
      expect(survivors(report.children)).toEqual([]);
      // Only the two deliberate kills end by a signal; everything else drained and exited 0.
      const ended = Object.fromEntries(report.children.map((c: { name: string; ended: string }) => [c.name, c.ended]));
      expect(ended).toMatchObject({ [killed]: 'signal SIGKILL', 'relay-fault': 'signal SIGKILL' });
      for (const [name, how] of Object.entries(ended)) {
        if (name !== killed && name !== 'relay-fault') expect(how, name).toBe('exit 0');
      }
    },
    showcaseBudgetMs,
  );

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
    const runDir = runDirOf(run);
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
