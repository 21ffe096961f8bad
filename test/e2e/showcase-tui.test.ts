/**
 * `amendsctl showcase --tui` in a real terminal (tmux, 120×45): the dashboard shows both
 * workers' partitions processing, the fault timeline (SIGKILL, the fenced late call, the
 * unknown COMMIT outcome resolved by re-observation, the relay crash) and ends on the
 * verifier's verdict while the rows are still live. Every distinct frame is kept in
 * artifacts/showcase-tui/frames.txt for a person to read.
 *
 * The same run is the suite's one whole showcase (verification.md, Showcase): it survives a
 * SIGKILL, a SIGSTOP past the session, a lost COMMIT reply and a relay crash and ends in PASS,
 * with its report on disk and no child process left behind (showcase-report.ts). The plain
 * rendering's own test (showcase.test.ts) interrupts one.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl } from '../support/endpoints.js';
import { expectPassingShowcase, showcaseRunDir } from '../support/showcase-report.js';

const budgetMs = 300_000;
const sampleMs = 250;

describe('amendsctl showcase --tui', () => {
  it(
    'draws the partitions, the fault timeline and the verdict in a real terminal; the run ends in PASS with its report',
    async () => {
      requireBuild();
      const cwd = mkdtempSync(join(tmpdir(), 'amends-showcase-tui-'));
      const session = `amends-showcase-tui-${process.pid}`;
      const exitFile = join(cwd, 'exit');
      const command = [
        `env AMENDS_DATABASE_URL='${testDatabaseUrl}' AMENDS_BROKERS='${testBrokers}'`,
        `'${process.execPath}' '${join(repoRoot, 'bin/amendsctl')}' showcase --tui;`,
        `echo $? > '${exitFile}'; sleep 60`,
      ].join(' ');
      execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '120', '-y', '45', '-c', cwd, command]);
      const frames: string[] = [];
      try {
        const deadline = Date.now() + budgetMs;
        while (!existsSync(exitFile) || readFileSync(exitFile, 'utf8').trim() === '') {
          if (Date.now() > deadline) throw new Error(`no exit within ${budgetMs / 1000} s:\n${frames.at(-1)}`);
          const pane = spawnSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' }).stdout ?? '';
          if (pane !== frames.at(-1)) frames.push(pane);
          await sleep(sampleMs);
        }
        const code = readFileSync(exitFile, 'utf8').trim();
        const last = spawnSync('tmux', ['capture-pane', '-p', '-t', session, '-S', '-200'], {
          encoding: 'utf8',
        }).stdout;
        mkdirSync(join(repoRoot, 'artifacts', 'showcase-tui'), { recursive: true });
        writeFileSync(
          join(repoRoot, 'artifacts', 'showcase-tui', 'frames.txt'),
          [...frames, last].join('\n──────── frame ────────\n'),
        );
        expect(code, last).toBe('0');
        expectPassingShowcase(showcaseRunDir(cwd));

        const rowsOf = (frame: string) =>
          frame
            .split('\n')
            .filter((l) =>
              /^\s+[01] (\(stale\) )?(claiming|seeking|processing|unknown|retired|failed|unassigned)/.test(l),
            );
        const processingBy = new Set(
          frames.flatMap((f) =>
            rowsOf(f).flatMap((row) => {
              const m = /^\s+([01]) processing\S*\s+(worker-[ab])\s/.exec(row);
              return m ? [`${m[1]}:${m[2]}`] : [];
            }),
          ),
        );
        // Both partitions processed, by both workers over the run (the takeover moves one).
        expect([...processingBy].some((k) => k.startsWith('0:'))).toBe(true);
        expect([...processingBy].some((k) => k.startsWith('1:'))).toBe(true);
        expect(new Set([...processingBy].map((k) => k.split(':')[1])).size).toBe(2);

        const everything = frames.join('\n');
        expect(everything).toMatch(/✗ sigkill: worker-[ab] SIGKILLed while deciding partition 0/);
        expect(everything).toMatch(/✓ sigstop recovered after [\d.]+ s: late process call under epoch \d+ fenced/);
        expect(everything).toMatch(/✓ commit_reply_dropped recovered after [\d.]+ s: re-observed/);
        expect(everything).toMatch(/✓ relay_exit_after_publish recovered/);
        // The verdict is on the dashboard while its partition rows are still live.
        const verdictFrame = frames.find((f) => f.includes('verdict: PASS'));
        expect(verdictFrame, 'a frame with the verdict').toBeDefined();
        expect(rowsOf(verdictFrame ?? '').length).toBe(2);
        expect(rowsOf(verdictFrame ?? '').every((r) => /processing/.test(r))).toBe(true);
        // The frame never outgrows the terminal (no scrolling, no flicker from full-height redraws).
        expect(Math.max(...frames.map((f) => f.trimEnd().split('\n').length))).toBeLessThanOrEqual(45);
        expect(last).toMatch(/^showcase \S+: PASS$/m);
      } finally {
        spawnSync('tmux', ['kill-session', '-t', session]);
      }
    },
    budgetMs + 30_000,
  );
});
