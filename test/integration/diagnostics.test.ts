/**
 * One-line diagnostics that say what to do next (cli.md): verify and the worker with an
 * unreachable broker, and a manifest that is not JSON, quoted whole on one line.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isOneLineDiagnostic, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { expectFailureLine } from '../support/process-log.js';
import { startWorker, stopAllWorkers, workerEnv } from '../support/worker-process.js';

const scratch = mkdtempSync(join(tmpdir(), 'amends-test-diagnostics-'));
const ownTopics = new Set<string>();
const unreachable = '127.0.0.1:1';
const advice = 'is the broker running (npm run up) and are --brokers / AMENDS_BROKERS right?';
let manifestPath: string;

beforeAll(async () => {
  requireBuild();
  const topic = testName();
  ownTopics.add(topic);
  const created = await runAmendsctl(['source-create', '--namespace', testName(), '--topic', topic], {
    AMENDS_BROKERS: testBrokers,
  });
  expect(created.code, created.stderr).toBe(0);
  manifestPath = join(scratch, 'manifest.json');
  writeFileSync(manifestPath, created.stdout);
});
afterAll(async () => {
  await stopAllWorkers();
  await deleteTestTopics(ownTopics);
});

describe('an unreachable broker', () => {
  it('verify says so in one line and what to check', async () => {
    const result = await runAmendsctl(['verify', '--manifest', manifestPath], {
      AMENDS_BROKERS: unreachable,
      AMENDS_DATABASE_URL: testDatabaseUrl,
    });
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr), result.stderr).toBe(true);
    expect(result.stderr).toContain(unreachable);
    expect(result.stderr.trimEnd().endsWith(advice)).toBe(true);
  });

  it('the worker says so in one line and what to check', async () => {
    // It waits out the outage budget first (worker.md §6), as it would for a restarting broker.
    const worker = startWorker({
      manifestPath,
      env: { ...workerEnv, AMENDS_BROKERS: unreachable },
      extraArgs: ['--outage-budget-s', '2'],
    });
    const exit = await worker.exited;
    expect(exit.code).toBe(1);
    const last = expectFailureLine(worker, 'worker');
    expect(last).toMatch(/^amends worker: outage budget of 2 s spent: /);
    expect(last).toContain(unreachable);
    expect(last.endsWith(advice), last).toBe(true);
  });
});

describe('a manifest that is not JSON', () => {
  it('is quoted whole on one line, newlines escaped', async () => {
    const path = join(scratch, 'broken.json');
    writeFileSync(path, '{"source_topic": "x",\n  "config": oops\n}');
    const result = await runAmendsctl(['simulate', '--manifest', path, '--file', path]);
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr), result.stderr).toBe(true);
    expect(result.stderr).toMatch(
      /^amendsctl simulate: manifest \S+broken\.json: not valid JSON \(.*\\n.*is not valid JSON\)\n$/,
    );
  });

  it('refuses a member given twice, naming it and where, which JSON.parse would resolve silently', async () => {
    const path = join(scratch, 'twice.json');
    writeFileSync(path, '{"source_topic": "a", "config": {}, "source_topic": "b"}');
    const result = await runAmendsctl(['simulate', '--manifest', path, '--file', path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `amendsctl simulate: manifest ${path}: duplicate member "source_topic" at the top level at byte 36: say each member once\n`,
    );
    writeFileSync(path, '{"source_topic": "a", "config": {"stock_keys": [{}, {"opening": 1, "opening": 2}]}}');
    const nested = await runAmendsctl(['simulate', '--manifest', path, '--file', path]);
    expect(nested.stderr).toBe(
      `amendsctl simulate: manifest ${path}: duplicate member "opening" in config.stock_keys[1] at byte 67: say each member once\n`,
    );
  });

  it('names the manifest once for a member problem', async () => {
    const path = join(scratch, 'unknown-member.json');
    writeFileSync(path, '{"a":1}');
    const result = await runAmendsctl(['simulate', '--manifest', path, '--file', path]);
    expect(result.stderr).toBe(
      `amendsctl simulate: manifest ${path}: unknown member "a"; source_topic must be a legal Kafka topic name\n`,
    );
  });
});
