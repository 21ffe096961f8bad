/**
 * `amendsctl namespace-drop` against the real database and broker (issue 35, item 6): it
 * drops every row of exactly the namespace it names, in every table, and nothing of another
 * (a namespace of its own topics, and a rebuild that shares the source); it only shows
 * without --yes, refuses while a process of the namespace is alive or, with --topics, while
 * a rebuild reads the same source; and --topics deletes the namespace's own topics.
 */

import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from '../../src/io/process/poll-until.js';
import { namespaceTables } from '../../src/io/store/namespace-drop.js';
import { isOneLineDiagnostic, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import { allStories, storyRecords, twoKeysConfig } from '../support/fixture-stories.js';
import { deleteTestTopics, topicExists } from '../support/kafka-test-tools.js';
import {
  amendsctl,
  type BoundSource,
  createBoundSource,
  loadText,
  scratchFile,
  startAmends,
  stopAllAmends,
  transportEnv,
} from '../support/transport-process.js';

const topics = new Set<string>();
const db = new pg.Client({ connectionString: testDatabaseUrl });

beforeAll(async () => {
  requireBuild();
  await db.connect();
});
afterEach(async () => {
  await stopAllAmends();
});
afterAll(async () => {
  await db.end();
  await deleteTestTopics(topics);
});

/** Rows of `namespace` per table, read independently of the command (by name or by id). */
async function rowsOf(namespace: string): Promise<Record<string, number>> {
  const id = (await db.query('SELECT id FROM namespaces WHERE namespace = $1', [namespace])).rows[0]?.id ?? -1;
  const counts: Record<string, number> = {};
  for (const { table, key } of namespaceTables) {
    const r = await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${key} = $1`, [
      key === 'ns' ? id : namespace,
    ]);
    counts[table] = r.rows[0].n;
  }
  return counts;
}

function drop(...args: string[]) {
  return runAmendsctl(['namespace-drop', ...args], { ...transportEnv });
}

/** Runs every process of `manifest` until `wait --drained`, then stops each with SIGTERM (final heartbeats). */
async function drainAndStop(manifest: string, roles: ('worker' | 'relay' | 'view')[]): Promise<void> {
  const processes = roles.map((role) => startAmends(role, manifest));
  await amendsctl(['wait', '--manifest', manifest, '--drained', '--timeout', '120']);
  const exits = await Promise.all(processes.map((p) => p.stop('SIGTERM')));
  expect(exits.map((e) => e.code)).toEqual(roles.map(() => 0));
}

async function boundAndDrained(): Promise<BoundSource> {
  const source = await createBoundSource(topics, twoKeysConfig);
  topics.add(source.outputTopic);
  await loadText(source, 'stories', allStories());
  await drainAndStop(source.manifestPath, ['worker', 'relay', 'view']);
  return source;
}

describe('amendsctl namespace-drop', () => {
  it('drops exactly its namespace, never while a process of it lives or a rebuild shares the topic', async () => {
    const [a, b] = [await boundAndDrained(), await boundAndDrained()];
    const aRows = await rowsOf(a.namespace);
    expect(aRows.decisions).toBe(storyRecords);
    expect(aRows.view_rows).toBeGreaterThan(0);

    const shown = await drop('--namespace', a.namespace, '--topics');
    expect(shown.code).toBe(1);
    expect(shown.stdout).toContain(`namespace ${a.namespace} would be dropped: `);
    expect(shown.stdout).toContain(`decisions ${storyRecords}`);
    expect(shown.stdout).toContain(`topics that would be deleted: ${a.topic} (`);
    expect(shown.stderr).toBe(
      `amendsctl namespace-drop: nothing was dropped: add --yes to drop namespace ${a.namespace}\n`,
    );
    expect(await rowsOf(a.namespace)).toEqual(aRows);

    const rebuild = testName();
    const rebuildManifest = scratchFile(
      `${rebuild}.manifest.json`,
      await amendsctl(['rebuild-create', '--manifest', a.manifestPath, '--namespace', rebuild]),
    );
    await drainAndStop(rebuildManifest, ['worker']);
    const before = { a: aRows, b: await rowsOf(b.namespace), r: await rowsOf(rebuild) };

    const worker = startAmends('worker', a.manifestPath);
    await pollUntil(
      'a heartbeat of the new worker',
      async () => {
        const r = await db.query(
          `SELECT 1 FROM worker_heartbeats WHERE namespace = $1 AND pid = $2 AND state->>'group' <> 'stopped'`,
          [a.namespace, worker.pid],
        );
        return (r.rowCount ?? 0) > 0 ? true : undefined;
      },
      { budgetMs: 30_000, pollMs: 100 },
    );
    const live = await drop('--namespace', a.namespace, '--yes');
    expect(live.code).toBe(1);
    expect(isOneLineDiagnostic(live.stderr)).toBe(true);
    expect(live.stderr).toMatch(
      new RegExp(
        `^amendsctl namespace-drop: namespace ${a.namespace} still has live processes: worker \\S+ \\(pid ${worker.pid}, `,
      ),
    );
    expect((await worker.stop('SIGTERM')).code).toBe(0);

    const shared = await drop('--namespace', a.namespace, '--topics', '--yes');
    expect(shared.code).toBe(1);
    expect(shared.stderr).toContain(
      `source topic ${a.topic} is read by namespace ${rebuild} as well: nothing was dropped`,
    );
    expect(await rowsOf(a.namespace)).toEqual({
      ...before.a,
      worker_heartbeats: (before.a.worker_heartbeats ?? 0) + 1,
    });

    const dropped = await drop('--namespace', a.namespace, '--yes');
    expect(dropped.stderr).toBe('');
    expect(dropped.code).toBe(0);
    expect(dropped.stdout).toMatch(new RegExp(`^namespace ${a.namespace} dropped: \\d+ rows \\(view_rows `));
    expect(Object.values(await rowsOf(a.namespace)).every((n) => n === 0)).toBe(true);
    expect(await rowsOf(b.namespace)).toEqual(before.b);
    expect(await rowsOf(rebuild)).toEqual(before.r);
    expect([await topicExists(a.topic), await topicExists(a.outputTopic)]).toEqual([true, true]);

    // The rebuild is now the source's only reader: --topics deletes it (the rebuild has no output topic).
    const withTopic = await drop('--namespace', rebuild, '--topics', '--yes');
    expect(withTopic.stderr).toBe('');
    expect(withTopic.code).toBe(0);
    expect(withTopic.stdout).toContain(`topic ${a.topic} deleted (${a.manifest.config.source_incarnation})`);
    expect(await topicExists(a.topic)).toBe(false);
    expect(await rowsOf(b.namespace)).toEqual(before.b);
    expect([await topicExists(b.topic), await topicExists(b.outputTopic)]).toEqual([true, true]);

    const again = await drop('--namespace', a.namespace, '--yes');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`namespace ${a.namespace} is not registered in `);
  });

  it('knows every table that holds rows of a namespace', async () => {
    const r = await db.query<{ table_name: string }>(
      `SELECT DISTINCT c.table_name FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.column_name IN ('namespace', 'ns')
        ORDER BY 1`,
    );
    expect(r.rows.map((row) => row.table_name)).toEqual(namespaceTables.map((t) => t.table).sort());
  });
});
