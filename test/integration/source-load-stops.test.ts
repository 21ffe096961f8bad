/**
 * `amendsctl source-load` stopped on purpose and waiting its turn (issue 35, item 6), as the
 * built binary against the real broker and database:
 *  - SIGINT or SIGTERM mid-load: the load stops queuing, flushes, names the last line known
 *    published, and exits 130 / 143; the topic then holds exactly those lines, and
 *    `--from-line` publishes exactly the rest (each line once, in file order);
 *  - a signal while it waits for the producer guard: nothing was published, exit 130;
 *  - `--wait S`: a held guard is waited for, and after S seconds the refusal names the holder
 *    and the flag.
 * The mid-load interruption lands at a known line through the test-only fault point
 * (AMENDS_FAULT=source-load-stop-at-line:N: the load stops itself with SIGSTOP once line N is
 * queued; the test sends the signal, then SIGCONT).
 */

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/domain/config.js';
import { LiveChildren, packageBin, WatchedChild } from '../../src/io/process/child-process.js';
import { pollUntil } from '../../src/io/process/poll-until.js';
import { ProducerGuard } from '../../src/io/store/producer-guard.js';
import { isOneLineDiagnostic, repoRoot, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { deleteTestTopics, endOffsets, readPartition } from '../support/kafka-test-tools.js';

const ownTopics = new Set<string>();
const scratch = mkdtempSync(join(tmpdir(), 'amends-test-source-load-stops-'));
const env = { PATH: process.env.PATH ?? '', AMENDS_BROKERS: testBrokers, AMENDS_DATABASE_URL: testDatabaseUrl };
const live = new LiveChildren();
const lineCount = 2_000;
const stopAtLine = 500;

/** A fresh source of the default config (widget@berlin on partition 0) and its manifest path. */
async function newSource(): Promise<{ manifest: Manifest; path: string }> {
  const topic = testName();
  ownTopics.add(topic);
  const created = await runAmendsctl(['source-create', '--namespace', testName(), '--topic', topic], env);
  expect(created.code).toBe(0);
  const path = join(scratch, `${topic}.manifest.json`);
  writeFileSync(path, created.stdout);
  return { manifest: JSON.parse(created.stdout) as Manifest, path };
}

/** `lineCount` posts of the one key, each its own txn (`S1`, `S2`, …), so every line is told apart on the topic. */
function bulkFile(): string {
  const key = { item: 'widget', location: 'berlin' };
  const body = Array.from({ length: lineCount }, (_, i) => {
    const value = { schema: 1, txn: `S${i + 1}`, rev: 1, op: 'post', ...key, day: '2026-03-02', qty: 1 };
    return JSON.stringify({ key, value });
  });
  const path = join(scratch, `${testName('bulk')}.jsonl`);
  writeFileSync(path, `${body.join('\n')}\n`);
  return path;
}

function startLoad(args: string[], extraEnv: Record<string, string> = {}): WatchedChild {
  return live.add(
    new WatchedChild({
      name: 'source-load',
      command: process.execPath,
      args: [packageBin('amendsctl'), 'source-load', ...args],
      env: { ...env, ...extraEnv },
      cwd: repoRoot,
      stdout: 'text',
      keepStderrText: true,
    }),
  );
}

/** Interrupts a load with `signal` right after line `stopAtLine` was queued; its exit and last stderr line. */
async function interruptMidLoad(path: string, file: string, signal: NodeJS.Signals) {
  const load = startLoad(['--manifest', path, '--file', file], {
    AMENDS_FAULT: `source-load-stop-at-line:${stopAtLine}`,
  });
  await load.waitForLine('the fault point', (l) => l.msg === 'fault_point', 30_000);
  load.signal(signal);
  load.signal('SIGCONT');
  const exit = await load.exitWithin(60_000);
  const report = load.logs.filter((l) => l.msg !== 'fault_point').map((l) => l.raw);
  return { exit, report, stdout: load.stdoutText };
}

/** Polls until a session named after the load's guard waits for a lock (pg_stat_activity). */
async function waitingForGuard(load: WatchedChild): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    await pollUntil(
      'source-load waiting for the producer guard',
      async () => {
        const r = await client.query(
          "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
          [`amendsctl source-load pid ${load.pid} guard`],
        );
        return (r.rowCount ?? 0) > 0 ? true : undefined;
      },
      { budgetMs: 30_000, pollMs: 50, failEarly: () => expect(load.running).toBe(true) },
    );
  } finally {
    await client.end();
  }
}

async function holdGuard(manifest: Manifest): Promise<ProducerGuard> {
  const holder = await ProducerGuard.open(testDatabaseUrl, manifest.config.source_incarnation, 'amends-test holder');
  expect(await holder.tryAcquire()).toEqual({ acquired: true });
  return holder;
}

beforeAll(() => requireBuild());
afterEach(async () => {
  await live.killAll();
});
afterAll(async () => {
  await deleteTestTopics(ownTopics);
});

describe('source-load interrupted', () => {
  it('on SIGINT flushes, names the last line known published, and --from-line publishes exactly the rest', async () => {
    const { manifest, path } = await newSource();
    const file = bulkFile();
    const { exit, report, stdout } = await interruptMidLoad(path, file, 'SIGINT');
    expect(exit).toMatchObject({ code: 130, signal: null });
    expect(report).toHaveLength(1);
    const known = /the last line known published is (\d+)\b/.exec(report[0]!);
    expect(report[0]).toMatch(/^amendsctl source-load: interrupted by SIGINT: stopped publishing and flushed/);
    const last = Number(known?.[1]);
    // Stopped right after line 500 was queued: everything queued was flushed, nothing more sent.
    expect(last).toBeGreaterThanOrEqual(stopAtLine);
    expect(last).toBeLessThan(lineCount);
    expect(report[0]).toContain(`lines 1-${last} of 1-${lineCount} are published`);
    expect(report[0]).toContain(`none after it was sent; to publish the rest, rerun with --from-line ${last + 1};`);
    expect(stdout.trimEnd().split('\n')).toHaveLength(last);
    expect(await endOffsets(manifest.source_topic, 1)).toEqual([last]);

    const rest = await runAmendsctl(
      ['source-load', '--manifest', path, '--file', file, '--from-line', `${last + 1}`],
      env,
    );
    expect(rest.stderr).toBe('');
    expect(rest.code).toBe(0);
    expect(rest.stdout.split('\n', 1)[0]).toBe(`line ${last + 1} -> partition 0 offset ${last}`);
    const records = await readPartition(manifest.source_topic, 0, lineCount);
    expect(records.map((r) => JSON.parse(String(r.value)).txn)).toEqual(
      Array.from({ length: lineCount }, (_, i) => `S${i + 1}`),
    );
    expect(await endOffsets(manifest.source_topic, 1)).toEqual([lineCount]);
  });

  it('on SIGTERM says the same and exits 143', async () => {
    const { path } = await newSource();
    const { exit, report } = await interruptMidLoad(path, bulkFile(), 'SIGTERM');
    expect(exit).toMatchObject({ code: 143, signal: null });
    expect(report).toHaveLength(1);
    const known = /^amendsctl source-load: interrupted by SIGTERM: .*the last line known published is (\d+)\b/.exec(
      report[0]!,
    );
    expect(Number(known?.[1])).toBeGreaterThanOrEqual(stopAtLine);
    expect(Number(known?.[1])).toBeLessThan(lineCount);
  });

  it('while it waits for the guard, says nothing was published and exits 130', async () => {
    const { manifest, path } = await newSource();
    const holder = await holdGuard(manifest);
    try {
      const load = startLoad(['--manifest', path, '--file', bulkFile(), '--wait', '60']);
      await waitingForGuard(load);
      load.signal('SIGINT');
      expect(await load.exitWithin(30_000)).toMatchObject({ code: 130, signal: null });
      expect(load.stderrText).toBe(
        'amendsctl source-load: interrupted by SIGINT before publishing: nothing was published; rerunning is safe\n',
      );
      expect(await endOffsets(manifest.source_topic, 1)).toEqual([0]);
    } finally {
      await holder.release();
    }
  });
});

describe('source-load --wait', () => {
  it('waits for a held guard and publishes once it is released', async () => {
    const { manifest, path } = await newSource();
    const holder = await holdGuard(manifest);
    let released = false;
    try {
      const load = startLoad(['--manifest', path, '--file', bulkFile(), '--wait', '60']);
      await waitingForGuard(load);
      await holder.release();
      released = true;
      const exit = await load.exitWithin(60_000);
      expect(load.stderrText).toBe('');
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(await endOffsets(manifest.source_topic, 1)).toEqual([lineCount]);
    } finally {
      if (!released) await holder.release();
    }
  });

  it('after S seconds names the holder and the flag; without --wait it refuses at once, naming the flag', async () => {
    const { manifest, path } = await newSource();
    const holder = await holdGuard(manifest);
    try {
      const file = bulkFile();
      const waited = await runAmendsctl(['source-load', '--manifest', path, '--file', file, '--wait', '1'], env);
      expect(waited.code).toBe(1);
      expect(isOneLineDiagnostic(waited.stderr)).toBe(true);
      expect(waited.stderr).toMatch(
        /^amendsctl source-load: the producer guard of source kafka:\S+ is still held after waiting 1 s by "amends-test holder" \(database backend pid \d+.*nothing was published; try again when it has finished \(or wait longer with --wait\)\n$/,
      );
      const atOnce = await runAmendsctl(['source-load', '--manifest', path, '--file', file], env);
      expect(atOnce.code).toBe(1);
      expect(atOnce.stderr).toMatch(/ is held by "amends-test holder" .*\(or wait for it with --wait S\)\n$/);
      expect(await endOffsets(manifest.source_topic, 1)).toEqual([0]);
    } finally {
      await holder.release();
    }
  });
});
