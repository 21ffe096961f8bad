/**
 * The dashboard on the real stack (quality.md "Dashboard"): a real `amends worker` process
 * on a fresh amends-test-* topic loaded by the real source-load, watched through the real
 * PostgreSQL/broker feed (src/tui/dashboard-feed.ts) into the store and the ink components;
 * then `amends tui` and `amends worker --tui` themselves in a real terminal (tmux), quit
 * with `q` (the worker's JSON logs go to its log file, never onto the screen).
 *
 * To see `claiming` (a claim takes milliseconds; heartbeats come once a second) the test
 * holds the partitions' rows with an uncommitted insert, which makes the worker's claim
 * upsert wait, and lets go as soon as a frame shows it — well within the claim's 5 s lock
 * timeout.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { render } from 'ink-testing-library';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardApp } from '../../src/tui/dashboard-app.js';
import { DashboardFeed } from '../../src/tui/dashboard-feed.js';
import { DashboardStore } from '../../src/tui/dashboard-store.js';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl } from '../support/endpoints.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import {
  amendsctl,
  createSource,
  loadFile,
  scratchFile,
  startWorker,
  stopAllWorkers,
  type TestSource,
} from '../support/worker-process.js';
import { header } from './fixtures.js';

const topics = new Set<string>();
const fixture = (name: string) => join(repoRoot, 'fixtures', name);
const stories = ['before.jsonl', 'second-key.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'];
let source: TestSource;
let ends: Map<number, number>;

beforeAll(async () => {
  requireBuild();
  source = await createSource(topics, fixture('two-keys.config.json'));
  // One source-load of the stories concatenated: one process instead of four.
  const all = scratchFile(
    `${source.topic}.records.jsonl`,
    stories.map((f) => readFileSync(fixture(f), 'utf8')).join(''),
  );
  ends = await loadFile(source, all);
  // source-load registered the namespace; inspect only checks that it is (it never registers).
  await amendsctl(['inspect', '--manifest', source.manifestPath]);
});

afterAll(async () => {
  await stopAllWorkers();
  await deleteTestTopics(topics);
});

function rowOf(frame: string, p: number): string {
  return frame.split('\n').find((l) => new RegExp(`^\\s+${p} `).test(l)) ?? '';
}

async function waitFor<T>(what: string, probe: () => T | undefined | false, budgetMs: number): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const found = probe();
    if (found !== undefined && found !== false) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${budgetMs} ms`);
    await sleep(50);
  }
}

describe('the dashboard on a live worker', () => {
  it('renders claiming, then processing, then retired and stopped after the worker stops', async () => {
    const partitionCount = source.manifest.config.partitions;
    const locker = new pg.Client({ connectionString: testDatabaseUrl });
    const pool = new pg.Pool({ connectionString: testDatabaseUrl, max: 2 });
    const store = new DashboardStore({ header: { ...header, namespace: source.namespace }, partitionCount });
    const feed = new DashboardFeed({
      db: pool,
      namespace: source.namespace,
      sourceTopic: source.topic,
      partitionCount,
      brokers: testBrokers,
      store,
      intervalMs: 200,
    });
    const { lastFrame, frames, unmount } = render(
      <DashboardApp store={store} onQuit={() => {}} size={{ columns: 100, rows: 30 }} />,
    );
    let locked = false;
    try {
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query(
        `INSERT INTO partitions (namespace, partition, epoch, owner)
           SELECT $1, p, 1, 'tui-test-holds-the-row' FROM generate_series(0, $2 - 1) p`,
        [source.namespace, partitionCount],
      );
      locked = true;
      feed.start();
      const worker = startWorker({ manifestPath: source.manifestPath, instanceId: 'tui-live-a' });
      const claiming = await waitFor(
        'a frame with a claiming partition',
        () => frames.find((f) => /claiming/.test(rowOf(f, 0)) || /claiming/.test(rowOf(f, 1))),
        20_000,
      );
      await locker.query('ROLLBACK');
      locked = false;
      expect(claiming).toMatch(/tui-live-a/);

      const caughtUp = await waitFor(
        'a frame with every partition processing at lag 0',
        () => {
          const f = lastFrame() ?? '';
          return [...ends].every(([p, end]) =>
            // Owner, epoch, cfg (never revised: 1), frontier, end, lag.
            new RegExp(`processing\\S*\\s+tui-live-a\\s+\\d+\\s+1\\s+${end}\\s+${end}\\s+0`).test(rowOf(f, p)),
          )
            ? f
            : undefined;
        },
        20_000,
      );
      expect(caughtUp).toMatch(/tui-live-a\s+worker\s+\d+ running\./);
      expect(caughtUp).toContain('APPLIED');

      const stopped = await worker.stop('SIGTERM');
      expect(stopped.code).toBe(0);
      const after = await waitFor(
        'a frame with the partitions retired and the worker stopped',
        () => {
          const f = lastFrame() ?? '';
          return [...ends.keys()].every((p) => /retired/.test(rowOf(f, p))) &&
            /tui-live-a\s+worker\s+\d+ stopped/.test(f)
            ? f
            : undefined;
        },
        10_000,
      );
      expect(after.split('\n').length).toBeLessThan(30);
    } finally {
      if (locked) await locker.query('ROLLBACK').catch(() => {});
      unmount();
      await feed.stop();
      store.dispose();
      await locker.end().catch(() => {});
      await pool.end();
    }
  });

  // The two terminals run side by side: `amends tui` then also sees the --tui worker's rows.
  describe('in a real terminal (tmux)', { concurrent: true }, () => {
    it('amends tui draws the namespace in a real terminal (tmux) and exits on q', async () => {
      const session = `amends-tui-test-${process.pid}`;
      const exitFile = scratchFile(`${session}.exit`, '');
      const command = [
        `env AMENDS_DATABASE_URL='${testDatabaseUrl}' AMENDS_BROKERS='${testBrokers}'`,
        `'${process.execPath}' bin/amends tui --manifest '${source.manifestPath}';`,
        `echo $? > '${exitFile}'`,
      ].join(' ');
      execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '100', '-y', '30', '-c', repoRoot, command]);
      const pane = () => spawnSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' }).stdout ?? '';
      try {
        const screen = await waitFor(
          'the dashboard on the tmux pane',
          () => {
            const s = pane();
            return [...ends].every(([p, end]) => new RegExp(`\\s${end}\\s+${end}\\s+0\\s`).test(`${rowOf(s, p)} `))
              ? s
              : undefined;
          },
          20_000,
        );
        expect(screen).toContain(`namespace ${source.namespace}`);
        expect(screen).toContain(`topic ${source.topic}`);
        expect(screen).toMatch(/brokers \S+ · db 127\.0\.0\.1:\d+\/\w+/);
        expect(screen).not.toContain('amends-local-only');
        expect(screen).toMatch(/^\s+p state\s+owner\s+epoch\s+cfg\s+frontier\s+end\s+lag/m);
        expect(screen.trimEnd().split('\n').length).toBeLessThan(30);
        expect(screen).toContain('q quit');
        execFileSync('tmux', ['send-keys', '-t', session, 'q']);
        const code = await waitFor(
          'amends tui to exit after q',
          () => (existsSync(exitFile) && readFileSync(exitFile, 'utf8').trim()) || undefined,
          10_000,
        );
        expect(code).toBe('0');
      } finally {
        spawnSync('tmux', ['kill-session', '-t', session]);
      }
    });
    it('amends tui redraws cleanly after the terminal is resized, leaving no stale lines', async () => {
      const session = `amends-tui-resize-test-${process.pid}`;
      execFileSync('tmux', [
        'new-session',
        '-d',
        '-s',
        session,
        '-x',
        '100',
        '-y',
        '30',
        '-c',
        repoRoot,
        'bash --norc',
      ]);
      const pane = () => spawnSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' }).stdout ?? '';
      const headers = (screen: string) => screen.split('\n').filter((l) => l.startsWith('amends tui · ')).length;
      try {
        // Lines above the frame first, as from a shell: the frame does not start at the top.
        const command = [
          'seq 1 15;',
          `env AMENDS_DATABASE_URL='${testDatabaseUrl}' AMENDS_BROKERS='${testBrokers}'`,
          `'${process.execPath}' bin/amends tui --manifest '${source.manifestPath}'`,
        ].join(' ');
        execFileSync('tmux', ['send-keys', '-t', session, command, 'Enter']);
        await waitFor('the dashboard on the tmux pane', () => /q quit/.test(pane()), 20_000);
        // Shrink below the frame, grow back, narrow, widen: each a resize the frame must survive.
        for (const [x, y] of [
          [100, 14],
          [100, 30],
          [70, 30],
          [100, 30],
        ]) {
          execFileSync('tmux', ['resize-window', '-t', session, '-x', String(x), '-y', String(y)]);
          await sleep(600);
        }
        const screen = await waitFor(
          'the redrawn dashboard',
          () => {
            const s = pane();
            return /q quit/.test(s) && s.split('\n')[0]?.startsWith('amends tui · ') ? s : undefined;
          },
          10_000,
        );
        expect(headers(screen), screen).toBe(1);
        expect(screen).toMatch(/^\s+p state\s+owner\s+epoch\s+cfg\s+frontier\s+end\s+lag/m);
      } finally {
        spawnSync('tmux', ['kill-session', '-t', session]);
      }
    });
    it('amends worker --tui draws its own actors and keeps its JSON logs off the screen', async () => {
      const session = `amends-worker-tui-test-${process.pid}`;
      const exitFile = scratchFile(`${session}.exit`, '');
      const instanceId = `tui-tmux-${process.pid}`;
      const logFile = join(repoRoot, 'artifacts', 'logs', `worker-${instanceId}.jsonl`);
      const command = [
        `env AMENDS_DATABASE_URL='${testDatabaseUrl}' AMENDS_BROKERS='${testBrokers}'`,
        `'${process.execPath}' bin/amends worker --tui --instance-id ${instanceId} --manifest '${source.manifestPath}';`,
        `echo $? > '${exitFile}'`,
      ].join(' ');
      execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '100', '-y', '30', '-c', repoRoot, command]);
      const pane = () => spawnSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' }).stdout ?? '';
      try {
        const screen = await waitFor(
          'the worker dashboard with its partitions processing',
          () => {
            const s = pane();
            return [...ends.keys()].every((p) => new RegExp(`processing\\S*\\s+${instanceId}`).test(rowOf(s, p)))
              ? s
              : undefined;
          },
          25_000,
        );
        expect(screen).toContain(`amends worker --tui ${instanceId}`);
        expect(screen).toContain(`logs artifacts/logs/worker-${instanceId}.jsonl`);
        expect(screen).toMatch(new RegExp(`${instanceId}\\s+worker\\s+\\d+ running\\.\\S+\\s+this`));
        expect(screen).not.toContain('{"msg"');
        execFileSync('tmux', ['send-keys', '-t', session, 'q']);
        const code = await waitFor(
          'amends worker --tui to drain and exit after q',
          () => (existsSync(exitFile) && readFileSync(exitFile, 'utf8').trim()) || undefined,
          20_000,
        );
        expect(code).toBe('0');
        const logs = readFileSync(logFile, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { msg: string });
        expect(logs.map((l) => l.msg)).toEqual(expect.arrayContaining(['worker_started', 'signal', 'worker_stopped']));
      } finally {
        spawnSync('tmux', ['kill-session', '-t', session]);
      }
    });
  });
});
