/**
 * `amendsctl verify` on the real broker and PostgreSQL (verification.md, quality.md §4):
 * real workers, relay and view decide and carry the fixture stories, then the built command
 * judges them from the outside. Each case must fail if the verifier wrongly said PASS:
 *
 * - PASS after a clean run (two keys on two partitions), the JSON document's exact shape;
 * - FAIL (exit 3) after one output row, one decision, one view row is changed in SQL;
 * - INCOMPLETE (exit 4) with the relay stopped, with the view stopped, and with a trailing
 *   control-record tail (a committed transaction's marker and an aborted transaction);
 * - the producer guard: verify waits for a held guard and proceeds once it is released, gives
 *   up after --wait naming the holder, and a source-load started while it holds the guard is
 *   refused.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProducerGuard, producerGuardKeys } from '../../src/io/store/producer-guard.js';
import type { VerifyDocument } from '../../src/verify/verify-document.js';
import { isOneLineDiagnostic, repoRoot, runAmendsctl } from '../support/amendsctl-process.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import {
  allStories,
  fixturePath,
  storyRecords,
  storyRows,
  storyVersions,
  twoKeysConfig,
} from '../support/fixture-stories.js';
import { TestProducer } from '../support/kafka-source-fixtures.js';
import {
  type BoundSource,
  createBoundSource,
  expectCleanStop,
  loadText,
  scratchFile,
  startAmends,
  stopAllAmends,
  transportEnv,
  transportSuite,
} from '../support/transport-process.js';

const { topics, probe } = transportSuite();
interface Verified {
  code: number | null;
  report: VerifyDocument;
  stderr: string;
}

async function verifyJson(source: BoundSource, args: string[] = []): Promise<Verified> {
  const r = await runAmendsctl(['verify', '--manifest', source.manifestPath, '--json', ...args], { ...transportEnv });
  let report: VerifyDocument;
  try {
    report = JSON.parse(r.stdout) as VerifyDocument;
  } catch {
    throw new Error(`verify exited ${r.code} without a JSON document: ${r.stdout}${r.stderr}`);
  }
  return { code: r.code, report, stderr: r.stderr };
}

/** A worker, relay and view over the stories, waited for until everything is decided, relayed and viewed. */
async function cleanRun(): Promise<BoundSource> {
  const source = await createBoundSource(topics, twoKeysConfig);
  startAmends('worker', source.manifestPath);
  const relay = startAmends('relay', source.manifestPath);
  const view = startAmends('view', source.manifestPath);
  await loadText(source, 'stories', allStories());
  await probe.waitPublished(source.namespace, storyVersions);
  await probe.waitViewCaughtUp(source);
  await expectCleanStop(relay, view);
  await stopAllAmends();
  return source;
}

const passCounts = {
  records: storyRecords,
  decisions: storyRecords,
  outputs: storyVersions,
  quarantine: 0,
  outbox_pending: 0,
  view_rows: storyRows,
};

/** issue 14: `--json` adds the time of each phase, the rate and the peak memory. */
const statsShape = {
  phases_ms: {
    source: expect.any(Number),
    store: expect.any(Number),
    topic: expect.any(Number),
    view: expect.any(Number),
  },
  total_ms: expect.any(Number),
  records_per_s: expect.any(Number),
  peak_rss_mb: expect.any(Number),
};

describe('amendsctl verify', () => {
  it('PASS after a clean run; FAIL naming one tampered output row, decision and view row', async () => {
    const source = await cleanRun();
    const pass = await verifyJson(source);
    expect(pass.code, pass.stderr).toBe(0);
    expect(pass.report).toEqual({
      verdict: 'PASS',
      reasons: [],
      partitions: [
        { partition: 0, frontier: 10, end: 10 },
        { partition: 1, frontier: 7, end: 7 },
      ],
      counts: passCounts,
      differences: [],
      stats: statsShape,
    });
    expect(Object.keys(pass.report)).toEqual(['verdict', 'reasons', 'partitions', 'counts', 'differences', 'stats']);

    const ns = source.namespace;
    const tampers: { what: string; change: string; undo: string; kind: string; key: string }[] = [
      {
        what: 'output row',
        change: `UPDATE output_versions SET closing = closing + 1 WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1) AND item = 'widget' AND day = '2026-03-03' AND version = 2`,
        undo: `UPDATE output_versions SET closing = closing - 1 WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1) AND item = 'widget' AND day = '2026-03-03' AND version = 2`,
        kind: 'output',
        key: 'widget@berlin 2026-03-03 v2',
      },
      {
        what: 'decision',
        change: `UPDATE decisions SET outcome = 'APPLIED' WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1) AND partition = 0 AND record_offset = 5 AND outcome = 'DUPLICATE'`,
        undo: `UPDATE decisions SET outcome = 'DUPLICATE' WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1) AND partition = 0 AND record_offset = 5`,
        kind: 'decision',
        key: '0:5',
      },
      {
        what: 'view row',
        change: `UPDATE view_rows SET closing = closing + 7 WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1) AND item = 'gadget' AND day = '2026-03-02'`,
        undo: `UPDATE view_rows SET closing = closing - 7 WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1) AND item = 'gadget' AND day = '2026-03-02'`,
        kind: 'view',
        key: 'gadget@paris 2026-03-02',
      },
    ];
    for (const t of tampers) {
      expect((await probe.pool.query(t.change, [ns])).rowCount, t.what).toBe(1);
      const fail = await verifyJson(source);
      expect(fail.code, `${t.what}: ${fail.stderr}`).toBe(3);
      expect(fail.report.verdict).toBe('FAIL');
      expect(fail.report.differences.map((d) => `${d.kind} ${d.key}`)).toEqual([`${t.kind} ${t.key}`]);
      expect(fail.report.differences[0]?.want).not.toEqual(fail.report.differences[0]?.got);
      expect(fail.report.reasons).toEqual([`${t.kind}: 1 difference, first at ${t.key}`]);
      await probe.pool.query(t.undo, [ns]);
    }

    // The human report says the same.
    await probe.pool.query(tampers[0]?.change as string, [ns]);
    const human = await runAmendsctl(['verify', '--manifest', source.manifestPath], { ...transportEnv });
    expect(human.code).toBe(3);
    expect(human.stdout).toContain(`verify ${ns} (source ${source.topic}): FAIL`);
    expect(human.stdout).toContain('  - output: 1 difference, first at widget@berlin 2026-03-03 v2');
    expect(human.stdout).toMatch(/want \{.*"closing":55.*\}\n {4}got {2}\{.*"closing":56/);
  });

  it('INCOMPLETE while the relay, then the view, is behind, and with a trailing control-record tail', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    startAmends('worker', source.manifestPath);
    await loadText(source, 'stories', allStories());
    await probe.waitDecided(source.namespace, storyRecords);

    const relayBehind = await verifyJson(source);
    expect(relayBehind.code, relayBehind.stderr).toBe(4);
    expect(relayBehind.report.differences).toEqual([]);
    expect(relayBehind.report.reasons).toEqual([
      `relay behind: ${storyVersions} outbox envelopes not yet published`,
      `view behind: ${storyRows} of ${storyRows} (item, location, day) rows not yet at the database's latest version`,
    ]);
    expect(relayBehind.report.counts.outbox_pending).toBe(storyVersions);

    const relay = startAmends('relay', source.manifestPath);
    await probe.waitPublished(source.namespace, storyVersions);
    const viewBehind = await verifyJson(source);
    expect(viewBehind.code, viewBehind.stderr).toBe(4);
    expect(viewBehind.report.differences).toEqual([]);
    expect(viewBehind.report.reasons).toEqual([
      'view partition 0: frontier 0 below output topic end 10',
      'view partition 1: frontier 0 below output topic end 7',
      `view behind: ${storyRows} of ${storyRows} (item, location, day) rows not yet at the database's latest version`,
    ]);

    const view = startAmends('view', source.manifestPath);
    await probe.waitViewCaughtUp(source);
    expect((await verifyJson(source)).code).toBe(0);

    // A committed transaction on partition 0 (one garbage record, then its marker) and an
    // aborted one on partition 1: the ends move past the last data record, which no frontier
    // ever reaches (no cursor-only completion rule exists).
    const committed = await TestProducer.open(testName('amends-test-txn'));
    const aborted = await TestProducer.open(testName('amends-test-txn'));
    try {
      await committed.beginTransaction();
      await committed.send(source.topic, [
        { partition: 0, key: Buffer.from('{"item":"widget","location":"berlin"}'), value: Buffer.from('not json') },
      ]);
      await committed.commitTransaction();
      await aborted.beginTransaction();
      await aborted.send(source.topic, [{ partition: 1, key: Buffer.from('k'), value: Buffer.from('aborted') }]);
      await aborted.abortTransaction();
    } finally {
      await committed.close();
      await aborted.close();
    }
    await probe.waitDecided(source.namespace, storyRecords + 1);
    const tail = await verifyJson(source);
    expect(tail.code, tail.stderr).toBe(4);
    expect(tail.report.reasons).toEqual([
      'partition 0: frontier 11 below end 12',
      'partition 1: frontier 7 below end 9',
    ]);
    expect(tail.report.partitions).toEqual([
      { partition: 0, frontier: 11, end: 12 },
      { partition: 1, frontier: 7, end: 9 },
    ]);
    // The aborted record is not a source record; the committed garbage is quarantined with its bytes.
    expect(tail.report.differences).toEqual([]);
    expect(tail.report.counts).toEqual({
      ...passCounts,
      records: storyRecords + 1,
      decisions: storyRecords + 1,
      quarantine: 1,
    });
    await expectCleanStop(relay, view);
  });

  it('waits for a held producer guard, gives up after --wait naming the holder, and refuses a load while it holds it', async () => {
    // No records: a bound, empty namespace passes as soon as verify may look.
    const source = await createBoundSource(topics, twoKeysConfig);
    const incarnation = source.manifest.config.source_incarnation;
    const holder = await ProducerGuard.open(testDatabaseUrl, incarnation, 'verify-test holder');
    let waiting: VerifyChild | undefined;
    try {
      expect((await holder.tryAcquire()).acquired).toBe(true);

      const gaveUp = await runAmendsctl(['verify', '--manifest', source.manifestPath, '--wait', '1'], {
        ...transportEnv,
      });
      expect(gaveUp.code).toBe(1);
      expect(isOneLineDiagnostic(gaveUp.stderr), gaveUp.stderr).toBe(true);
      expect(gaveUp.stderr).toContain('"verify-test holder"');
      expect(gaveUp.stdout).toBe('');
      // With --json the same refusal is also a document (cli.md): verdict ERROR, the reason.
      const gaveUpJson = await runAmendsctl(['verify', '--manifest', source.manifestPath, '--wait', '1', '--json'], {
        ...transportEnv,
      });
      expect(gaveUpJson.code).toBe(1);
      expect(isOneLineDiagnostic(gaveUpJson.stderr), gaveUpJson.stderr).toBe(true);
      expect(JSON.parse(gaveUpJson.stdout)).toEqual({
        verdict: 'ERROR',
        reasons: [gaveUpJson.stderr.trimEnd().replace(/^amendsctl verify: /, '')],
      });
      expect(gaveUpJson.stdout).toContain('verify-test holder');

      waiting = startVerify(source);
      await probe.until(
        'verify queued behind the guard',
        () => guardSessions(incarnation),
        (s) => s.some((x) => !x.granted && x.application_name.startsWith('amendsctl verify pid')),
      );
      expect(waiting.exit).toBeUndefined();
    } finally {
      await holder.release();
    }
    const proceeded = await (waiting as VerifyChild).exited;
    expect(proceeded.code, (waiting as VerifyChild).stderr).toBe(0);
    expect(JSON.parse((waiting as VerifyChild).stdout).verdict).toBe('PASS');

    // verify holds the guard and stops itself there (test-only fault point): a load now is refused.
    const holding = startVerify(source, { AMENDS_FAULT: 'verify-stop-after-guard' });
    await probe.until(
      'verify stopped holding the guard',
      async () => holding.stderr,
      (s) => s.includes('"fault_point"'),
    );
    const sessions = await guardSessions(incarnation);
    expect(sessions.filter((s) => s.granted).map((s) => s.application_name)).toEqual([
      `amendsctl verify pid ${holding.pid} guard`,
    ]);
    const load = await runAmendsctl(
      [
        'source-load',
        '--manifest',
        source.manifestPath,
        '--file',
        scratchFile(`${source.topic}.before.jsonl`, readFileSync(fixturePath('before.jsonl'), 'utf8')),
      ],
      { ...transportEnv },
    );
    expect(load.code).toBe(1);
    expect(isOneLineDiagnostic(load.stderr), load.stderr).toBe(true);
    expect(load.stderr).toContain(`"amendsctl verify pid ${holding.pid} guard"`);
    holding.child.kill('SIGCONT');
    const after = await holding.exited;
    expect(after.code, holding.stderr).toBe(0);
    // Nothing was published by the refused load: still an empty, passing source.
    expect(JSON.parse(holding.stdout)).toMatchObject({ verdict: 'PASS', counts: { records: 0 } });
  });
});

interface VerifyChild {
  child: ChildProcess;
  pid: number;
  stdout: string;
  stderr: string;
  exit: { code: number | null } | undefined;
  exited: Promise<{ code: number | null }>;
}

/** `amendsctl verify --json` as a child process the test can watch, stop and continue. */
function startVerify(source: BoundSource, env: Record<string, string> = {}): VerifyChild {
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'bin/amendsctl'), 'verify', '--manifest', source.manifestPath, '--json'],
    { cwd: repoRoot, env: { ...transportEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const v: VerifyChild = {
    child,
    pid: child.pid ?? -1,
    stdout: '',
    stderr: '',
    exit: undefined,
    exited: new Promise((resolve) => {
      child.once('close', (code) => {
        v.exit = { code };
        resolve(v.exit);
      });
    }),
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    v.stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    v.stderr += chunk.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
  void v.exited.then(() => clearTimeout(timer));
  return v;
}

/** Sessions holding or waiting for the producer guard of an incarnation, from pg_locks. */
async function guardSessions(incarnation: string): Promise<{ application_name: string; granted: boolean }[]> {
  const { rows } = await probe.pool.query(
    `SELECT a.application_name, l.granted
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.classid = $1::int4::oid AND l.objid = $2::int4::oid AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    producerGuardKeys(incarnation),
  );
  return rows as { application_name: string; granted: boolean }[];
}
