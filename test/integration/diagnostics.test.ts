/**
 * One-line diagnostics that say what to do next (cli.md): verify, source-load and the worker
 * with a refused broker (said so, within seconds, with advice for an operator's address, not
 * the local stack's), a refused database, a manifest whose configuration differs from the
 * registered one (the fields named), and a manifest that is not JSON, quoted whole on one line.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configDigest, type Manifest } from '../../src/domain/config.js';
// A refused cluster is said before one admin request's timeout.
import { adminRequestTimeoutMs } from '../../src/io/kafka/kafka-admin.js';
import { isOneLineDiagnostic, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { fixturePath } from '../support/fixture-stories.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { registerByLoading } from '../support/namespace-registration.js';
import { expectFailureLine } from '../support/process-log.js';
import { startWorker, stopAllWorkers, workerEnv } from '../support/worker-process.js';

const scratch = mkdtempSync(join(tmpdir(), 'amends-test-diagnostics-'));
const ownTopics = new Set<string>();
/** Nothing listens there, and it is not the local stack's port: an operator's own address. */
const unreachable = '127.0.0.1:1';
const refused = `connection refused at ${unreachable}`;
const advice =
  'check the bootstrap address (--brokers, AMENDS_BROKERS or bootstrap.servers of --kafka-config), that this host can reach it, and the security settings of --kafka-config';
let manifestPath: string;
let manifestText: string;

beforeAll(async () => {
  requireBuild();
  const topic = testName();
  const namespace = testName();
  ownTopics.add(topic);
  const created = await runAmendsctl(['source-create', '--namespace', namespace, '--topic', topic], {
    AMENDS_BROKERS: testBrokers,
  });
  expect(created.code, created.stderr).toBe(0);
  manifestText = created.stdout;
  // Registered, as a namespace verify is asked about is (verify registers nothing).
  const endpoints = { AMENDS_BROKERS: testBrokers, AMENDS_DATABASE_URL: testDatabaseUrl };
  manifestPath = await registerByLoading(manifestText, namespace, scratch, endpoints);
});
afterAll(async () => {
  await stopAllWorkers();
  await deleteTestTopics(ownTopics);
});

describe('a refused broker', () => {
  it('verify says refused in one line and what to check, without the local stack', async () => {
    const result = await runAmendsctl(['verify', '--manifest', manifestPath], {
      AMENDS_BROKERS: unreachable,
      AMENDS_DATABASE_URL: testDatabaseUrl,
    });
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr), result.stderr).toBe(true);
    expect(result.stderr).toContain(refused);
    expect(result.stderr).not.toMatch(/npm run up/);
    expect(result.stderr.trimEnd().endsWith(advice)).toBe(true);
  });

  it('source-load says refused before one request could time out, not "Timed out" after two', async () => {
    const started = Date.now();
    const result = await runAmendsctl(
      ['source-load', '--manifest', manifestPath, '--file', fixturePath('before.jsonl')],
      {
        AMENDS_BROKERS: unreachable,
        AMENDS_DATABASE_URL: testDatabaseUrl,
      },
    );
    const tookMs = Date.now() - started;
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr), result.stderr).toBe(true);
    expect(result.stderr).toMatch(
      new RegExp(`^amendsctl source-load: cannot describe topic \\S+ on brokers ${unreachable}: ${refused}: `),
    );
    expect(result.stderr).not.toMatch(/Timed out|npm run up/);
    // Both of its tries (live-source-topic.ts) took less than one request's timeout.
    expect(tookMs).toBeLessThan(adminRequestTimeoutMs);
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
    expect(last).toContain(refused);
    expect(last.endsWith(advice), last).toBe(true);
  });
});

describe('a refused database', () => {
  it("is said to be refused, with advice for an operator's address, not the local stack", async () => {
    const url = 'postgres://amends:secret-1234@127.0.0.1:1/amends?sslmode=disable';
    const result = await runAmendsctl(['inspect', '--manifest', manifestPath], {
      AMENDS_BROKERS: testBrokers,
      AMENDS_DATABASE_URL: url,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'amendsctl inspect: cannot reach the database at 127.0.0.1:1/amends: connection refused: check the host and port of AMENDS_DATABASE_URL, and that this host can reach them\n',
    );
  });
});

describe('a manifest whose configuration differs from the registered one', () => {
  it('names each differing field with both values, then both digests', async () => {
    const namespace = (JSON.parse(manifestText) as Manifest).config.namespace;
    await registerByLoading(manifestText, namespace, scratch, {
      AMENDS_BROKERS: testBrokers,
      AMENDS_DATABASE_URL: testDatabaseUrl,
    });
    const changed = JSON.parse(manifestText) as Manifest;
    const key = changed.config.stock_keys[0] as { opening: number };
    key.opening += 5;
    changed.config.ledger_origin = '2026-03-02';
    const path = join(scratch, 'changed.json');
    writeFileSync(path, JSON.stringify(changed));
    const result = await runAmendsctl(['inspect', '--manifest', path], {
      AMENDS_BROKERS: testBrokers,
      AMENDS_DATABASE_URL: testDatabaseUrl,
    });
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr), result.stderr).toBe(true);
    expect(result.stderr).toContain(
      `namespace ${namespace} is registered with another configuration than this manifest's (ledger_origin: "2026-03-01" registered, "2026-03-02" in the manifest; stock_keys[0].opening: ${key.opening - 5} registered, ${key.opening} in the manifest; config digest ${configDigest((JSON.parse(manifestText) as Manifest).config)} registered, ${configDigest(changed.config)} in the manifest): `,
    );
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
