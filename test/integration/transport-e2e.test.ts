/**
 * The transport end to end (transport.md): real `amends worker`, `amends relay` and
 * `amends view` processes over the real broker and PostgreSQL, the fixture stories loaded
 * by the real source-load, and what they produced checked from the outside: the output
 * topic read back with a plain consumer, `export --what view|outputs`, `inspect --json`.
 *
 * Each test makes its own amends-test-* source and output topics (deleted in afterAll;
 * namespaces stay as rows). Every process left running is SIGKILLed in afterEach.
 */

import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { outputLine } from '../../src/domain/export-lines.js';
import type { OutputVersion } from '../../src/domain/output-version.js';
import {
  allStories,
  fixturePath as fixture,
  storyFiles,
  storyVersions,
  twoKeysConfig,
} from '../support/fixture-stories.js';
import {
  amendsctl,
  type BoundSource,
  createBoundSource,
  expectCleanStop,
  exportInProcess,
  loadText,
  readOutputTopic,
  startAmends,
  transportSuite,
} from '../support/transport-process.js';

const { topics, probe } = transportSuite();
const storyRows = 7;

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

/** export --what outputs reduced to the highest version per (item, location, day), as view lines. */
function expectedView(outputs: string): string[] {
  const latest = new Map<string, string>();
  for (const line of lines(outputs)) {
    const v = JSON.parse(line) as OutputVersion;
    latest.set(JSON.stringify([v.item, v.location, v.day]), line.replace('{"type":"output"', '{"type":"view"'));
  }
  // export's order is (item, location, day, version): the last line per key is its latest,
  // and the keys stay in canonical order.
  return [...latest.values()];
}

/** The output topic's records as export output lines (the value's fields, in export's order). */
function topicAsOutputLines(records: { value: Buffer | null }[]): string[] {
  return records.map((r) => {
    const v = JSON.parse((r.value as Buffer).toString('utf8')) as OutputVersion;
    return outputLine(v);
  });
}

async function exportWhat(source: BoundSource, what: string): Promise<string> {
  return amendsctl(['export', '--manifest', source.manifestPath, '--what', what]);
}

describe('transport: worker + relay + view', () => {
  it('the view holds the highest version per day and the output topic every version', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    startAmends('worker', source.manifestPath);
    const relay = startAmends('relay', source.manifestPath);
    const view = startAmends('view', source.manifestPath);
    await relay.waitForLog('relay_active');
    await loadText(source, 'stories', allStories());
    await probe.waitPublished(source.namespace, storyVersions);
    const counts = await probe.waitViewCaughtUp(source);

    const outputs = await exportWhat(source, 'outputs');
    expect(lines(outputs)).toHaveLength(storyVersions);
    const viewExport = await exportWhat(source, 'view');
    expect(lines(viewExport)).toEqual(expectedView(outputs));
    expect(lines(viewExport)).toHaveLength(storyRows);
    expect(viewExport).toContain('"retracted":true');

    // Every version on the topic exactly once (no fault here), on its stock key's partition.
    const records = await readOutputTopic(source);
    expect(topicAsOutputLines(records).sort()).toEqual(lines(outputs).sort());
    for (const r of records) {
      const v = JSON.parse((r.value as Buffer).toString('utf8')) as OutputVersion;
      expect(r.partition).toBe(v.item === 'widget' ? 0 : 1);
    }
    expect(counts.map((c) => [c.applied, c.stale, c.duplicate])).toEqual(counts.map((c) => [c.frontier, 0, 0]));

    const inspected = JSON.parse(await amendsctl(['inspect', '--manifest', source.manifestPath, '--json']));
    expect(inspected.outbox).toEqual({ pending: 0, published: storyVersions });
    expect(inspected.view.partitions, JSON.stringify(inspected.view)).toEqual(
      counts.map((c) =>
        expect.objectContaining({ partition: c.partition, frontier: c.frontier, end: c.frontier, lag: 0 }),
      ),
    );
    const roles = (inspected.workers as { role: string }[]).map((w) => w.role).sort();
    expect(roles).toEqual(['relay', 'view', 'worker']);

    await expectCleanStop(relay, view);
    expect(relay.messages('relay_stopped')[0]).toMatchObject({ state: 'drained' });
  });

  it('a relay killed between publish and mark republishes identical records; the view counts duplicates', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    startAmends('worker', source.manifestPath);
    await loadText(source, 'stories', allStories());
    // Everything decided before the relay starts: its first batch is all 17 rows.
    await probe.until(
      'all decided',
      () => probe.outbox(source.namespace),
      (o) => o.total === storyVersions,
    );
    const faulty = startAmends('relay', source.manifestPath, [], { AMENDS_FAULT: 'relay-exit-after-publish' });
    expect((await faulty.waitForExit()).signal).toBe('SIGKILL');
    expect(faulty.messages('fault_injected')).toHaveLength(1);
    expect(await probe.outbox(source.namespace)).toEqual({ total: storyVersions, pending: storyVersions });

    const relay = startAmends('relay', source.manifestPath);
    await probe.waitPublished(source.namespace, storyVersions);
    const view = startAmends('view', source.manifestPath);
    const counts = await probe.waitViewCaughtUp(source);

    const records = await readOutputTopic(source);
    expect(records).toHaveLength(2 * storyVersions);
    const outputs = (await exportInProcess(probe.pool, source.namespace, 'outputs')).join('\n');
    // Two identical copies of every version: the same bytes, never a different content.
    expect(topicAsOutputLines(records).sort()).toEqual([...lines(outputs), ...lines(outputs)].sort());
    expect(await exportInProcess(probe.pool, source.namespace, 'view')).toEqual(expectedView(outputs));
    // The second copy of each row's latest version is a duplicate, of each older one stale.
    const sum = (k: 'applied' | 'stale' | 'duplicate') => counts.reduce((n, c) => n + c[k], 0);
    expect([sum('applied'), sum('duplicate'), sum('stale')]).toEqual([
      storyVersions,
      storyRows,
      storyVersions - storyRows,
    ]);
    await expectCleanStop(relay, view);
  });

  it('two relays: one active, the standby takes over when the active one is SIGKILLed', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    startAmends('worker', source.manifestPath);
    const a = startAmends('relay', source.manifestPath);
    await a.waitForLog('relay_active');
    const b = startAmends('relay', source.manifestPath);
    await b.waitForLog('relay_standby');
    const view = startAmends('view', source.manifestPath);
    const records = await loadText(source, 'before', readFileSync(fixture('before.jsonl'), 'utf8'));
    await probe.waitDecided(source.namespace, records);
    const { total } = await probe.outbox(source.namespace);
    await probe.waitPublished(source.namespace, total);
    expect(b.messages('relay_published')).toHaveLength(0);

    await a.kill();
    // What A marked before it died; B publishes (and marks) everything else.
    const markedByA = total - (await probe.outbox(source.namespace)).pending;
    await b.waitForLog('relay_active', 10_000);
    const rest = storyFiles
      .slice(1)
      .map((s) => readFileSync(fixture(s), 'utf8'))
      .join('');
    await loadText(source, 'rest', rest);
    await probe.waitPublished(source.namespace, storyVersions);
    await probe.waitViewCaughtUp(source);
    expect(b.messages('relay_published').length).toBeGreaterThan(0);
    const publishedByB = b.messages('relay_published').reduce((n, l) => n + (l.marked as number), 0);
    expect(publishedByB).toBe(storyVersions - markedByA);
    const outputs = (await exportInProcess(probe.pool, source.namespace, 'outputs')).join('\n');
    expect(await exportInProcess(probe.pool, source.namespace, 'view')).toEqual(expectedView(outputs));
    await expectCleanStop(b, view);
  });

  it('marks every clean exit stopped in the heartbeat, the standby ones too', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    const started = [
      ['relay', 'relay-active'],
      ['relay', 'relay-standby'],
      ['view', 'view-active'],
      ['view', 'view-standby'],
    ] as const;
    const processes = [];
    for (const [role, id] of started) {
      const p = startAmends(role, source.manifestPath, ['--instance-id', id]);
      await p.waitForLog(id.endsWith('standby') ? `${role}_standby` : `${role}_active`);
      processes.push(p);
    }
    await expectCleanStop(...processes);
    const { rows } = await probe.pool.query(
      `SELECT worker_id, state->>'state' AS state FROM worker_heartbeats WHERE namespace = $1 ORDER BY worker_id`,
      [source.namespace],
    );
    expect(rows).toEqual(
      ['relay-active', 'relay-standby', 'view-active', 'view-standby'].map((id) => ({
        worker_id: id,
        state: 'stopped',
      })),
    );
  });

  it('a restarted view resumes from its own frontier: nothing is applied twice', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    startAmends('worker', source.manifestPath);
    const relay = startAmends('relay', source.manifestPath);
    let view = startAmends('view', source.manifestPath);
    const records = await loadText(source, 'before', readFileSync(fixture('before.jsonl'), 'utf8'));
    await probe.waitDecided(source.namespace, records);
    const firstTotal = (await probe.outbox(source.namespace)).total;
    await probe.waitPublished(source.namespace, firstTotal);
    const before = await probe.waitViewCaughtUp(source);
    expect((await view.stop('SIGTERM')).code).toBe(0);

    // With no new records, a restart applies nothing.
    view = startAmends('view', source.manifestPath);
    const active = await view.waitForLog('view_active');
    expect(active.frontiers).toEqual(before.map((r) => ({ partition: r.partition, frontier: r.frontier })));
    await sleep(1_500);
    expect(view.messages('view_applied')).toHaveLength(0);
    expect(await probe.viewPartitions(source.namespace)).toEqual(before);
    expect((await view.stop('SIGTERM')).code).toBe(0);

    // Records published while it is down are applied once each after the restart.
    const rest = storyFiles
      .slice(1)
      .map((s) => readFileSync(fixture(s), 'utf8'))
      .join('');
    await loadText(source, 'rest', rest);
    await probe.waitPublished(source.namespace, storyVersions);
    view = startAmends('view', source.manifestPath);
    const after = await probe.waitViewCaughtUp(source);
    const applied = view.messages('view_applied').reduce((n, l) => n + (l.records as number), 0);
    expect(applied).toBe(storyVersions - firstTotal);
    expect(after.map((r) => [r.applied, r.stale, r.duplicate])).toEqual(after.map((r) => [r.frontier, 0, 0]));
    const outputs = (await exportInProcess(probe.pool, source.namespace, 'outputs')).join('\n');
    expect(await exportInProcess(probe.pool, source.namespace, 'view')).toEqual(expectedView(outputs));
    await expectCleanStop(relay, view);
  });
});
