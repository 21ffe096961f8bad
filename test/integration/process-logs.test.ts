/**
 * The logs of the long-running processes as a log shipper reads them (docs/operations.md#logs,
 * issue 35): off a terminal every line of worker, relay and view is a JSON object with `role`
 * and `namespace` on it, their failure included (one line of level fatal, the last); a
 * person asks for the pretty format and reads that failure as every command's diagnostic;
 * and the lines per store batch, relay batch and view poll are debug lines, so a chain
 * at the default level logs nothing per record.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isOneLineDiagnostic } from '../support/amendsctl-process.js';
import { fixturePath, twoKeysConfig } from '../support/fixture-stories.js';
import { expectFailureLine, expectLogLines } from '../support/process-log.js';
import {
  createBoundSource,
  expectCleanStop,
  loadText,
  startAmends,
  transportSuite,
} from '../support/transport-process.js';

const { topics, probe } = transportSuite();
const roles = ['worker', 'relay', 'view'] as const;
/** Nothing listens there: every role's database session fails at once (refused). */
const unreachableDatabase = { AMENDS_DATABASE_URL: 'postgres://amends:x@127.0.0.1:1/amends?sslmode=disable' };
/** The lines whose number grows with the records: one per store batch, relay batch, view poll. */
const perBatchLines = ['process_attempt', 'relay_published', 'view_applied'];

describe('the log of a failing process', () => {
  it('is JSON to the last line for every role: role and namespace on each, the failure one fatal line', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    // A second of outage budget: a metrics line, outage warnings, then the failure.
    const args = ['--metrics-addr', '127.0.0.1:0', '--outage-budget-s', '1'];
    const processes = roles.map((role) => startAmends(role, source.manifestPath, args, unreachableDatabase));
    const exits = await Promise.all(processes.map((p) => p.waitForExit()));
    expect(exits.map((e) => e.code)).toEqual([1, 1, 1]);
    for (const [i, p] of processes.entries()) {
      const role = roles[i] as string;
      expectLogLines(p, role, source.namespace);
      expect(p.messages('metrics_listening'), p.stderr).toHaveLength(1);
      expect(p.messages(`${role}_outage`).length, p.stderr).toBeGreaterThan(0);
      expect(p.messages(`${role}_outage`).every((l) => l.level === 'warn')).toBe(true);
      const diagnostic = expectFailureLine(p, role);
      expect(diagnostic).toMatch(new RegExp(`^amends ${role}: outage budget of 1 s spent: cannot reach the database`));
      expect(p.logs.at(-1)?.[role], p.stderr).toBeTypeOf('string');
      expect(p.stdout).toBe('');
    }
  });

  it('reads as the diagnostic of every command in the pretty format, each other line one human line', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    const quiet = startAmends(
      'relay',
      source.manifestPath,
      ['--log-format', 'pretty', '--outage-budget-s', '0'],
      unreachableDatabase,
    );
    expect((await quiet.waitForExit()).code).toBe(1);
    expect(isOneLineDiagnostic(quiet.stderr), quiet.stderr).toBe(true);
    expect(quiet.stderr).toMatch(/^amends relay: .*cannot reach the database at 127\.0\.0\.1:1\/amends/);

    const view = startAmends('view', source.manifestPath, ['--metrics-addr', '127.0.0.1:0', '--outage-budget-s', '0'], {
      ...unreachableDatabase,
      AMENDS_LOG_FORMAT: 'pretty',
    });
    expect((await view.waitForExit()).code).toBe(1);
    const lines = view.stderr.trimEnd().split('\n');
    expect(lines, view.stderr).toHaveLength(2);
    const where = `view ${source.namespace}`;
    expect(lines[0]).toMatch(
      new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  ${where} metrics_listening address=127\\.0\\.0\\.1:\\d+$`),
    );
    expect(lines[1]).toMatch(/^amends view: cannot reach the database at 127\.0\.0\.1:1\/amends/);
  });

  it('says a bad --log-format as its one fatal line, in the format a process off a terminal writes', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    const worker = startAmends('worker', source.manifestPath, ['--log-format', 'yaml']);
    expect((await worker.waitForExit()).code).toBe(2);
    expect(worker.logs).toHaveLength(1);
    expect(expectFailureLine(worker, 'worker', 2)).toBe(
      'amends worker: --log-format yaml: expected one of json, pretty',
    );
  });
});

describe('per-batch lines', () => {
  it('are debug: at the default level a drained chain at batch 1 logs none of them, every line JSON with role and namespace', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    const info = { AMENDS_LOG_LEVEL: 'info' };
    const worker = startAmends('worker', source.manifestPath, ['--batch-size', '1'], info);
    const relay = startAmends('relay', source.manifestPath, [], info);
    // The view at debug: its poll lines are there, at level debug, beside the info lines.
    const view = startAmends('view', source.manifestPath, ['--log-level', 'debug'], info);
    const records = await loadText(source, 'before', readFileSync(fixturePath('before.jsonl'), 'utf8'));
    await probe.waitDecided(source.namespace, records);
    await probe.waitPublished(source.namespace, (await probe.outbox(source.namespace)).total);
    await probe.waitViewCaughtUp(source);
    await expectCleanStop(relay, view);
    expect((await worker.stop('SIGTERM')).code).toBe(0);

    for (const [role, p] of [
      ['worker', worker],
      ['relay', relay],
      ['view', view],
    ] as const) {
      expectLogLines(p, role, source.namespace);
      expect(p.messages(`${role}_stopped`), p.stderr).toHaveLength(1);
    }
    for (const p of [worker, relay]) {
      expect(p.logs.filter((l) => perBatchLines.includes(l.msg as string)).map((l) => l.raw)).toEqual([]);
      expect(p.logs.some((l) => l.level === 'debug')).toBe(false);
    }
    const applied = view.messages('view_applied');
    expect(applied.length).toBeGreaterThan(0);
    expect(applied.every((l) => l.level === 'debug')).toBe(true);
  });
});
