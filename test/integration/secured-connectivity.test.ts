// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${env:…} is the literal syntax under test
/**
 * Secured connectivity (issue 16) against the local stack's SASL_SSL listener (SCRAM-SHA-512,
 * 127.0.0.1:19094, .stack/kafka-client-sasl.properties written by scripts/stack.sh) and its
 * PostgreSQL over TLS with verify-full against the stack's CA: every command of the chain
 * (source-create, output-create, source-load, worker, relay, view, verify, inspect) with
 * --kafka-config, checked from the outside. A wrong password is one line and exit 1; an
 * unknown property one line and exit 2; sslmode=require works without pg's warning. A client
 * that speaks the wrong protocol for the port (plaintext at SASL_SSL, TLS at PLAINTEXT) is
 * told so; a CA file the URL names relative to another directory, or none for verify-full,
 * is one line naming sslrootcert.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { packageBin, runToEnd } from '../../src/io/process/child-process.js';
import { repoRoot, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import { fixturePath, twoKeysConfig } from '../support/fixture-stories.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { scratchFile, startAmends, stopAllAmends, TransportProbe } from '../support/transport-process.js';

const clientFile = join(repoRoot, '.stack/kafka-client-sasl.properties');
const caFile = join(repoRoot, '.stack/tls/ca.pem');
/** The test database (AMENDS_TEST_DATABASE_URL) with other TLS parameters. */
function testDatabaseWith(params: Record<string, string>): string {
  const url = new URL(testDatabaseUrl);
  url.search = new URLSearchParams(params).toString();
  return url.toString();
}
const verifyFullUrl = testDatabaseWith({ sslmode: 'verify-full', sslrootcert: caFile });
const requireUrl = testDatabaseWith({ sslmode: 'require' });
/** What every process of this suite sees: no plaintext broker address, the TLS database. */
const securedEnv = { AMENDS_DATABASE_URL: verifyFullUrl, AMENDS_BROKERS: '127.0.0.1:1' };
const kafkaConfig = ['--kafka-config', clientFile];

const topics = new Set<string>();
const probe = new TransportProbe();

async function securedCtl(args: string[], env: Record<string, string> = securedEnv): Promise<string> {
  const r = await runAmendsctl([...args, ...kafkaConfig], env);
  if (r.code !== 0) throw new Error(`amendsctl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  expect(r.stderr).not.toMatch(/WARNING/);
  return r.stdout;
}

beforeAll(() => {
  requireBuild();
  // The stack makes both at `npm run up`; without them this suite cannot run (it fails, never skips).
  for (const f of [clientFile, caFile]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run npm run up (scripts/stack.sh makes it)`);
  }
});
afterEach(() => stopAllAmends());
afterAll(async () => {
  await stopAllAmends();
  await probe.close();
  await deleteTestTopics(topics);
});

describe('SASL_SSL + PostgreSQL TLS', () => {
  it('runs the whole chain over the secured listener and verify-full TLS, and verify passes', async () => {
    const topic = testName();
    const namespace = testName();
    topics.add(topic).add(`${topic}-out`);
    const manifest = await securedCtl([
      'source-create',
      '--namespace',
      namespace,
      '--topic',
      topic,
      '--config',
      twoKeysConfig,
    ]);
    expect(manifest).not.toMatch(/amends-local-only|sasl/i);
    const manifestPath = scratchFile(`${topic}.manifest.json`, manifest);
    await securedCtl(['output-create', '--manifest', manifestPath, '--topic', `${topic}-out`]);
    const input =
      readFileSync(fixturePath('before.jsonl'), 'utf8') + readFileSync(fixturePath('second-key.jsonl'), 'utf8');
    const records = input.split('\n').filter((l) => l !== '').length;
    await securedCtl(['source-load', '--manifest', manifestPath, '--file', scratchFile(`${topic}.jsonl`, input)]);

    const roles = (['worker', 'relay', 'view'] as const).map((role) =>
      startAmends(role, manifestPath, kafkaConfig, securedEnv),
    );
    await probe.waitDecided(namespace, records);
    await roles[0]?.waitForLog('worker_started');
    // Each process's sessions are encrypted (pg_stat_ssl), not merely allowed to be.
    const db = new pg.Client({
      connectionString: testDatabaseUrl,
    });
    await db.connect();
    try {
      const sessions = await db.query<{ application_name: string; ssl: boolean }>(
        `SELECT a.application_name, s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s ON s.pid = a.pid
          WHERE a.application_name ~ $1`,
        [`^amends (worker|relay|view) `],
      );
      const ours = sessions.rows.filter((r) => roles.some((p) => r.application_name.endsWith(`-${p.pid}`)));
      expect(ours.length).toBeGreaterThanOrEqual(3);
      expect(ours.every((r) => r.ssl)).toBe(true);
    } finally {
      await db.end();
    }
    // Drained before verify: verify says INCOMPLETE, rightly, while the relay or the view is behind.
    const { total } = await probe.outbox(namespace);
    await probe.waitPublished(namespace, total);
    const bound = { namespace, topic, outputTopic: `${topic}-out`, manifestPath, manifest: JSON.parse(manifest) };
    await probe.waitViewCaughtUp(bound);
    const verify = await runAmendsctl(
      ['verify', '--manifest', manifestPath, '--wait', '60', ...kafkaConfig],
      securedEnv,
    );
    expect(verify.stderr).not.toMatch(/WARNING/);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/PASS/);

    const inspect = await securedCtl(['inspect', '--manifest', manifestPath, '--json'], {
      AMENDS_DATABASE_URL: requireUrl,
      AMENDS_BROKERS: '127.0.0.1:1',
    });
    const lags = (JSON.parse(inspect) as { partitions: { lag: number | null }[] }).partitions.map((p) => p.lag);
    expect(lags).toEqual([0, 0]);
    for (const p of roles) {
      expect(p.stderr).not.toMatch(/WARNING|sasl\.password|amends-local-only/);
      expect(await p.stop()).toEqual({ code: 0, signal: null });
    }
  });

  it('a wrong password is one line naming the SASL failure, exit 1', async () => {
    const bad = scratchFile(
      `${testName()}.properties`,
      readFileSync(clientFile, 'utf8').replace(/^sasl\.password=.*$/m, 'sasl.password=${env:WRONG_SECRET}'),
    );
    const secret = 'not-the-password-1234';
    const r = await runAmendsctl(
      ['source-create', '--namespace', testName(), '--topic', testName(), '--kafka-config', bad],
      { ...securedEnv, WRONG_SECRET: secret },
    );
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/SASL authentication/);
    expect(r.stderr).not.toContain(secret);
  });

  it('an unknown property is one line, exit 2, before anything is created', async () => {
    const unknown = scratchFile(`${testName()}.properties`, `${readFileSync(clientFile, 'utf8')}sasl.pasword=typo\n`);
    const topic = testName();
    const r = await runAmendsctl(
      ['source-create', '--namespace', testName(), '--topic', topic, '--kafka-config', unknown],
      securedEnv,
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/unknown librdkafka property sasl\.pasword/);
  });
});

describe('a client that speaks another protocol than the port', () => {
  /** librdkafka's admin request timeout (kafka-admin.ts): a mismatch is said before it. */
  const adminRequestTimeoutMs = 10_000;

  it('plaintext at the SASL_SSL listener is named as such, with the setting to use', async () => {
    const started = Date.now();
    const r = await runAmendsctl(['source-create', '--namespace', testName(), '--topic', testName()], {
      AMENDS_BROKERS: '127.0.0.1:19094',
    });
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /: the broker at 127\.0\.0\.1:19094 closed the connection during the handshake, as a TLS or SASL listener does to a plaintext client: set security\.protocol \(SSL, SASL_SSL or SASL_PLAINTEXT\)/,
    );
    expect(r.stderr).not.toMatch(/Timed out|is the broker running/);
    expect(Date.now() - started).toBeLessThan(adminRequestTimeoutMs);
  });

  it('SASL_SSL at the PLAINTEXT listener is named as such', async () => {
    const atPlaintext = scratchFile(
      `${testName()}.properties`,
      readFileSync(clientFile, 'utf8').replace(/^bootstrap\.servers=.*$/m, 'bootstrap.servers=127.0.0.1:19092'),
    );
    const r = await runAmendsctl(
      ['source-create', '--namespace', testName(), '--topic', testName(), '--kafka-config', atPlaintext],
      securedEnv,
    );
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /: the broker at 127\.0\.0\.1:19092 answered the TLS handshake like a PLAINTEXT listener: use the cluster's TLS address, or security\.protocol=SASL_PLAINTEXT in --kafka-config/,
    );
  });
});

describe('PostgreSQL TLS settings', () => {
  /** A manifest inspect can read; the database is not reached, so no namespace need exist. */
  const manifest = () =>
    scratchFile(
      `${testName()}.manifest.json`,
      JSON.stringify({
        source_topic: 'tls-settings',
        config: {
          namespace: testName(),
          schema_version: 1,
          ledger_origin: '2026-03-01',
          partitions: 1,
          stock_keys: [{ item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 }],
          source_incarnation: `kafka:${'0123456789abcdef'.repeat(2)}`,
        },
      }),
    );

  it('a relative sslrootcert used from another directory names the parameter and the resolved path', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'amends-test-elsewhere-'));
    const url = `${testDatabaseWith({ sslmode: 'verify-full' })}&sslrootcert=.stack/tls/ca.pem`;
    const r = await runToEnd(process.execPath, [packageBin('amendsctl'), 'inspect', '--manifest', manifest()], {
      cwd: elsewhere,
      env: { PATH: process.env.PATH ?? '', AMENDS_DATABASE_URL: url },
      timeoutMs: 30_000,
      label: 'amendsctl inspect from another directory',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `amendsctl inspect: AMENDS_DATABASE_URL: sslrootcert=.stack/tls/ca.pem cannot be read: ${join(elsewhere, '.stack/tls/ca.pem')}: no such file (a relative path is read from the working directory, ${elsewhere}); give the file's absolute path\n`,
    );
  });

  it('verify-full without a CA says to name one with sslrootcert', async () => {
    const url = testDatabaseWith({ sslmode: 'verify-full' });
    const r = await runAmendsctl(['inspect', '--manifest', manifest()], { AMENDS_DATABASE_URL: url });
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^amendsctl inspect: database 127\.0\.0\.1:15432\/\w+: connecting failed: .*: the server's certificate is not signed by a CA this host trusts: name its CA with sslrootcert=\/path\/to\/ca\.pem in AMENDS_DATABASE_URL\n$/,
    );
  });
});
