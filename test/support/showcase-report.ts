/**
 * What a finished `amendsctl showcase` run left behind (verification.md, Showcase): the report
 * on disk, the children's logs and the processes. One run serves both renderings: the dashboard
 * test (showcase-tui.test.ts) checks these on the run it drew, and the plain run's test
 * (showcase.test.ts) those of an interrupted one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

/** The one run directory under CWD/artifacts/showcase. */
export function showcaseRunDir(cwd: string): string {
  const base = join(cwd, 'artifacts', 'showcase');
  const [only] = readdirSync(base);
  if (only === undefined) throw new Error(`no run directory under ${base}`);
  return join(base, only);
}

/** The report's children that still exist (meow renames a process, so its pid is the handle). */
export function survivors(children: { name: string; pid: number }[]): string[] {
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

/**
 * A run that survived a SIGKILL, a SIGSTOP past the session, a lost COMMIT reply and a relay
 * crash and ended in PASS: every fault recovered, the verifier's counts, the stopped worker's
 * late call refused by the store in its own log, and every child stopped, by a signal only
 * where the showcase killed it.
 */
export function expectPassingShowcase(runDir: string): void {
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
}
