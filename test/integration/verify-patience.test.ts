/**
 * `amendsctl verify` waits out a read that the session's statement timeout cancels, and still
 * answers with a verdict (issue 35, item 6: verify on a large namespace under load exited 1 on
 * "canceling statement due to statement timeout").
 *
 * The slow read is made without timing: the namespace lives in a fresh schema of its own (its
 * URL's search_path), where the test holds an ACCESS EXCLUSIVE lock on its `decisions` table, so
 * verify's first decision page waits until the session's 5 s timeout cancels it. The test lets
 * go only once verify has started the same read again (a second lock wait of its session in
 * pg_stat_activity, begun after the first), which the verifier before this change never did:
 * it exited 1 with the server's text.
 */

import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LiveChildren, packageBin, WatchedChild } from '../../src/io/process/child-process.js';
import { pollUntil } from '../../src/io/process/poll-until.js';
import { repoRoot, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';
import { scratchFile, startWorker, stopAllWorkers } from '../support/worker-process.js';

const topics = new Set<string>();
const admin = new pg.Client({ connectionString: testDatabaseUrl });
const schemas = new TestSchemas(admin, 'amends_test_patience');
const live = new LiveChildren();

beforeAll(async () => {
  requireBuild();
  await admin.connect();
});
afterEach(async () => {
  await live.killAll();
  await stopAllWorkers();
});
afterAll(async () => {
  await schemas.dropAll();
  await admin.end();
  await deleteTestTopics(topics);
});

async function ok(args: string[], env: Record<string, string>): Promise<string> {
  const r = await runAmendsctl(args, env, 120_000);
  if (r.code !== 0) throw new Error(`amendsctl ${args[0]} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** The query_start of each lock wait of `pid`'s sessions seen so far, until `enough` says stop. */
async function lockWaitsOf(verify: WatchedChild, enough: (starts: Set<string>) => boolean): Promise<Set<string>> {
  const starts = new Set<string>();
  return pollUntil(
    'a second lock wait of verify',
    async () => {
      const r = await admin.query<{ started: string }>(
        `SELECT query_start::text AS started FROM pg_stat_activity
          WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [`amendsctl verify pid ${verify.pid}`],
      );
      for (const row of r.rows) starts.add(row.started);
      return enough(starts) ? starts : undefined;
    },
    {
      budgetMs: 60_000,
      pollMs: 100,
      failEarly: () => {
        if (verify.exit !== undefined) throw new Error(`verify exited first: ${verify.stderrText}`);
      },
    },
  );
}

describe('verify under a statement timeout', () => {
  it('reads again after a cancelled page and answers PASS', async () => {
    const schema = await schemas.fresh();
    const env = {
      PATH: process.env.PATH ?? '',
      AMENDS_BROKERS: testBrokers,
      AMENDS_DATABASE_URL: urlForSchema(schema),
    };
    const topic = testName();
    topics.add(topic);
    const manifestText = await ok(['source-create', '--namespace', testName(), '--topic', topic], env);
    const manifest = scratchFile(`${topic}.manifest.json`, manifestText);
    await ok(['source-load', '--manifest', manifest, '--file', join(repoRoot, 'fixtures', 'before.jsonl')], env);
    const worker = startWorker({ manifestPath: manifest, env });
    await ok(['wait', '--manifest', manifest, '--drained', '--timeout', '60'], env);
    expect((await worker.stop('SIGTERM')).code).toBe(0);

    const locker = new pg.Client({ connectionString: urlForSchema(schema) });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE decisions IN ACCESS EXCLUSIVE MODE');
      const verify = live.add(
        new WatchedChild({
          name: 'verify',
          command: process.execPath,
          args: [packageBin('amendsctl'), 'verify', '--manifest', manifest, '--json'],
          env,
          cwd: repoRoot,
          stdout: 'text',
          keepStderrText: true,
        }),
      );
      // The first wait is cancelled after 5 s; the second, begun after it, is the read again.
      await lockWaitsOf(verify, (starts) => starts.size >= 2);
      await locker.query('COMMIT');
      const exit = await verify.exitWithin(60_000);
      expect(verify.stderrText).toBe('');
      expect(exit).toMatchObject({ code: 0, signal: null });
      const report = JSON.parse(verify.stdoutText) as { verdict: string; counts: { decisions: number } };
      expect(report.verdict).toBe('PASS');
      expect(report.counts.decisions).toBe(6);
    } finally {
      await locker.end();
    }
  });
});
