/**
 * `amendsctl source-load` against the real broker and database, run as the built binary.
 * Each test creates its own topic and namespace (deleted topics in afterAll; namespaces
 * are rows with random amends-test-* names and stay).
 */

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configDigest, type Manifest } from '../../src/domain/config.js';
import { ProducerGuard, producerGuardKeys } from '../../src/io/store/producer-guard.js';
import { PgFaultProxy } from '../../src/showcase/pg-fault-proxy.js';
import { isOneLineDiagnostic, repoRoot, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from '../support/endpoints.js';
import { deleteTestTopics, endOffsets, readPartition } from '../support/kafka-test-tools.js';

const ownTopics = new Set<string>();
const scratch = mkdtempSync(join(tmpdir(), 'amends-test-source-load-'));
const env = { AMENDS_BROKERS: testBrokers, AMENDS_DATABASE_URL: testDatabaseUrl };
const fixtures = ['before.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'].map((f) =>
  join(repoRoot, 'fixtures', f),
);

/** Sorted-member JSON of plain ASCII objects: what canonical JSON is for the fixtures. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A fresh source topic and manifest made by the real source-create; returns the manifest path. */
async function newSource(extraArgs: string[] = []): Promise<{ manifest: Manifest; path: string }> {
  const topic = testName();
  ownTopics.add(topic);
  const created = await runAmendsctl(['source-create', '--namespace', testName(), '--topic', topic, ...extraArgs], env);
  expect(created.stderr).toBe('');
  expect(created.code).toBe(0);
  const path = join(scratch, `${topic}.manifest.json`);
  writeFileSync(path, created.stdout);
  return { manifest: JSON.parse(created.stdout) as Manifest, path };
}

/** Sets topic configuration entries, keeping source-create's safe retention (an alter replaces the set). */
async function alterTopicConfig(topic: string, entries: Record<string, string>): Promise<void> {
  const kafka = new kafkajs.Kafka({ brokers: testBrokers.split(','), logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const safe = { 'cleanup.policy': 'delete', 'retention.ms': '-1', 'retention.bytes': '-1' };
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: kafkajs.ConfigResourceTypes.TOPIC,
          name: topic,
          configEntries: Object.entries({ ...safe, ...entries }).map(([name, value]) => ({ name, value })),
        },
      ],
    });
  } finally {
    await admin.disconnect();
  }
}

function writeScratch(name: string, content: string): string {
  const path = join(scratch, name);
  writeFileSync(path, content);
  return path;
}

beforeAll(() => requireBuild());
afterAll(async () => {
  await deleteTestTopics(ownTopics);
});

describe('amendsctl source-load', () => {
  it('publishes the three fixtures in order: offsets 0-9 on partition 0, canonical JSON bytes', async () => {
    const { manifest, path } = await newSource();
    const printed: string[] = [];
    for (const fixture of fixtures) {
      const result = await runAmendsctl(['source-load', '--manifest', path, '--file', fixture], env);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      printed.push(...result.stdout.trimEnd().split('\n'));
    }
    expect(printed).toEqual([
      'line 1 -> partition 0 offset 0',
      'line 2 -> partition 0 offset 1',
      'line 3 -> partition 0 offset 2',
      'line 4 -> partition 0 offset 3',
      'line 5 -> partition 0 offset 4',
      'line 6 -> partition 0 offset 5',
      'line 1 -> partition 0 offset 6',
      'line 2 -> partition 0 offset 7',
      'line 1 -> partition 0 offset 8',
      'line 2 -> partition 0 offset 9',
    ]);

    expect(await endOffsets(manifest.source_topic, 2)).toEqual([10, 0]);
    const records = await readPartition(manifest.source_topic, 0, 10);
    const lines = fixtures.flatMap((f) => readFileSync(f, 'utf8').trimEnd().split('\n'));
    expect(records.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    records.forEach((record, i) => {
      const line = JSON.parse(lines[i]!);
      expect(record.key?.toString('utf8')).toBe(sortedJson(line.key));
      expect(record.value?.toString('utf8')).toBe(sortedJson(line.value));
    });
    // One literal check, so the test does not only agree with its own serializer.
    expect(records[0]!.key?.toString('utf8')).toBe('{"item":"widget","location":"berlin"}');
    expect(records[8]!.value?.toString('utf8')).toBe(
      '{"item":"widget","location":"berlin","op":"cancel","rev":2,"schema":1,"txn":"T4"}',
    );
  });

  it('publishes nothing from a file with one invalid line in the middle', async () => {
    const { manifest, path } = await newSource();
    const good = readFileSync(fixtures[0]!, 'utf8').trimEnd().split('\n');
    const bad = '{"key":{"item":"widget","location":"paris"},"value":{"schema":1}}';
    const file = writeScratch('one-bad-line.jsonl', `${[good[0], good[1], bad, good[2]].join('\n')}\n`);
    const result = await runAmendsctl(['source-load', '--manifest', path, '--file', file], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toContain('line 3:');
    expect(result.stderr).toContain('not a configured stock key');
    expect(await endOffsets(manifest.source_topic, 2)).toEqual([0, 0]);
  });

  it('refuses to publish while the producer guard is held, naming the holder', async () => {
    const { manifest, path } = await newSource();
    const holder = await ProducerGuard.open(
      testDatabaseUrl,
      manifest.config.source_incarnation,
      'amends-test guard holder',
    );
    try {
      expect(await holder.tryAcquire()).toEqual({ acquired: true });
      const result = await runAmendsctl(['source-load', '--manifest', path, '--file', fixtures[0]!], env);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(isOneLineDiagnostic(result.stderr)).toBe(true);
      expect(result.stderr).toContain('producer guard');
      expect(result.stderr).toContain('"amends-test guard holder"');
      expect(await endOffsets(manifest.source_topic, 2)).toEqual([0, 0]);
    } finally {
      await holder.release();
    }
    // Released: the same load now goes through.
    const after = await runAmendsctl(['source-load', '--manifest', path, '--file', fixtures[1]!], env);
    expect(after.code).toBe(0);
    expect(after.stdout).toBe('line 1 -> partition 0 offset 0\nline 2 -> partition 0 offset 1\n');
  });

  it('says in one line that AMENDS_DATABASE_URL is missing, before reading anything', async () => {
    const result = await runAmendsctl(
      ['source-load', '--manifest', '/nonexistent/manifest.json', '--file', fixtures[0]!],
      { AMENDS_BROKERS: testBrokers },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toMatch(/^amendsctl source-load: AMENDS_DATABASE_URL is not set: /);
  });

  it('says in one line that the database is unreachable, without credentials', async () => {
    const { manifest, path } = await newSource();
    const result = await runAmendsctl(['source-load', '--manifest', path, '--file', fixtures[0]!], {
      ...env,
      AMENDS_DATABASE_URL: 'postgres://amends:secret-password@127.0.0.1:1/amends?sslmode=disable',
    });
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toContain('cannot reach the database at 127.0.0.1:1/amends');
    expect(result.stderr).not.toContain('secret-password');
    expect(await endOffsets(manifest.source_topic, 2)).toEqual([0, 0]);
  });

  it('waits out a database that is away when it starts, then publishes every line', async () => {
    const { manifest, path } = await newSource();
    const { proxy, url } = await PgFaultProxy.start(testDatabaseUrl);
    try {
      const away = proxy.outage(2_500); // every connection refused for 2.5 s, from now
      const result = await runAmendsctl(['source-load', '--manifest', path, '--file', fixtures[0]!], {
        ...env,
        AMENDS_DATABASE_URL: url,
      });
      await away;
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(await endOffsets(manifest.source_topic, 2)).toEqual([6, 0]);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a manifest whose digest differs from the registered namespace, naming both digests', async () => {
    const { manifest, path } = await newSource();
    const first = await runAmendsctl(['source-load', '--manifest', path, '--file', fixtures[2]!], env);
    expect(first.code).toBe(0);

    const changed: Manifest = { ...manifest, config: { ...manifest.config, ledger_origin: '2026-02-01' } };
    const changedPath = writeScratch(`${manifest.config.namespace}-changed.json`, JSON.stringify(changed));
    const result = await runAmendsctl(['source-load', '--manifest', changedPath, '--file', fixtures[0]!], env);
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toContain(configDigest(manifest.config));
    expect(result.stderr).toContain(configDigest(changed.config));
    expect(await endOffsets(manifest.source_topic, 2)).toEqual([2, 0]);
  });

  it('refuses a topic whose UUID is not the manifest incarnation (a recreated topic)', async () => {
    const { manifest } = await newSource();
    const other = `kafka:${'0123456789abcdef'.repeat(2)}`;
    const stale: Manifest = {
      ...manifest,
      config: { ...manifest.config, namespace: testName(), source_incarnation: other },
    };
    const stalePath = writeScratch(`${stale.config.namespace}.json`, JSON.stringify(stale));
    const result = await runAmendsctl(['source-load', '--manifest', stalePath, '--file', fixtures[0]!], env);
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toContain('recreated');
    expect(result.stderr).toContain(manifest.config.source_incarnation);
    expect(await endOffsets(manifest.source_topic, 2)).toEqual([0, 0]);
  });

  it('routes each key to its mapped partition and holds the guard, named by command and pid, while loading', async () => {
    const configPath = writeScratch(
      'two-keys.json',
      JSON.stringify({
        ledger_origin: '2026-03-01',
        stock_keys: [
          { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
          { item: 'gadget', location: 'paris', partition: 1, opening: 0, threshold: 0 },
        ],
      }),
    );
    const { manifest, path } = await newSource(['--config', configPath]);
    const count = 2_000;
    const keys = [
      { item: 'widget', location: 'berlin' },
      { item: 'gadget', location: 'paris' },
    ];
    const body = Array.from({ length: count }, (_, i) => {
      const key = keys[i % 2]!;
      const value = { schema: 1, txn: `B${i}`, rev: 1, op: 'post', ...key, day: '2026-03-02', qty: 1 };
      return JSON.stringify({ key, value });
    }).join('\n');
    const file = writeScratch('bulk.jsonl', `${body}\n`);

    const [k1, k2] = producerGuardKeys(manifest.config.source_incarnation);
    const watcher = new pg.Client({ connectionString: testDatabaseUrl });
    await watcher.connect();
    const holders = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const r = await watcher.query<{ application_name: string }>(
          `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
              AND l.classid = $1::int4::oid AND l.objid = $2::int4::oid`,
          [k1, k2],
        );
        for (const row of r.rows) holders.add(row.application_name);
        await sleep(20);
      }
    })();
    const started = Date.now();
    const result = await runAmendsctl(['source-load', '--manifest', path, '--file', file], env);
    const elapsedMs = Date.now() - started;
    watching = false;
    await watch;
    const afterExit = await watcher.query(
      `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2
          AND classid = $1::int4::oid AND objid = $2::int4::oid`,
      [k1, k2],
    );
    await watcher.end();

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const expected = Array.from(
      { length: count },
      (_, i) => `line ${i + 1} -> partition ${i % 2} offset ${Math.floor(i / 2)}`,
    );
    expect(result.stdout.trimEnd().split('\n')).toEqual(expected);
    expect(await endOffsets(manifest.source_topic, 2)).toEqual([count / 2, count / 2]);
    expect([...holders]).toHaveLength(1);
    expect([...holders][0]).toMatch(/^amendsctl source-load pid \d+ guard$/);
    expect(afterExit.rowCount).toBe(0);
    console.info(`source-load: ${count} lines in ${elapsedMs} ms including process start`);
  });

  it('exits 1 naming the line when the broker rejects a publication', async () => {
    const { manifest, path } = await newSource();
    // A record whose create time is older than the broker's clock when it arrives is refused
    // (INVALID_TIMESTAMP, not retriable): with 0 ms allowed, every record is, since librdkafka
    // stamps it when queued and sends it a linger later.
    await alterTopicConfig(manifest.source_topic, { 'message.timestamp.before.max.ms': '0' });
    const result = await runAmendsctl(['source-load', '--manifest', path, '--file', fixtures[0]!], env);
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toMatch(/^amendsctl source-load: line 1: publication failed: /);
    // Anything printed was really written (here: nothing).
    const printed = result.stdout === '' ? [] : result.stdout.trimEnd().split('\n');
    const [end] = await endOffsets(manifest.source_topic, 2);
    expect(printed).toHaveLength(end!);
  });

  it('refuses a 3 MB line after two good ones before publishing anything', async () => {
    const { manifest, path } = await newSource();
    const lines = readFileSync(fixtures[0]!, 'utf8').trimEnd().split('\n');
    const huge = JSON.parse(lines[2]!);
    huge.value.note = 'x'.repeat(3_000_000);
    const file = writeScratch('huge-third.jsonl', `${[lines[0], lines[1], JSON.stringify(huge)].join('\n')}\n`);
    const result = await runAmendsctl(['source-load', '--manifest', path, '--file', file], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toMatch(/^amendsctl source-load: line 3: the encoded record is 300\d{4} bytes /);
    expect(result.stderr).toContain("the producer's message.max.bytes 1000000");
    expect(result.stderr).toContain('nothing was published');
    expect(await endOffsets(manifest.source_topic, 2)).toEqual([0, 0]);
  });

  it("refuses a line over the topic's own max.message.bytes, naming that limit", async () => {
    const { manifest, path } = await newSource();
    await alterTopicConfig(manifest.source_topic, { 'max.message.bytes': '600' });
    const lines = readFileSync(fixtures[0]!, 'utf8').trimEnd().split('\n');
    const wide = JSON.parse(lines[1]!);
    wide.value.note = 'x'.repeat(400);
    const file = writeScratch('wide-second.jsonl', `${[lines[0], JSON.stringify(wide), lines[2]].join('\n')}\n`);
    const result = await runAmendsctl(['source-load', '--manifest', path, '--file', file], env);
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toContain('line 2: the encoded record is');
    expect(result.stderr).toContain(
      `more than the 503 bytes a record may have (topic ${manifest.source_topic}'s max.message.bytes 600`,
    );
    expect(await endOffsets(manifest.source_topic, 2)).toEqual([0, 0]);
    // Lines within the limit still go through, batched within it.
    const fits = writeScratch('fits.jsonl', `${lines.slice(0, 5).join('\n')}\n`);
    const loaded = await runAmendsctl(['source-load', '--manifest', path, '--file', fits], env);
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(await endOffsets(manifest.source_topic, 2)).toEqual([5, 0]);
  });

  it('treats bad flags as usage errors (exit 2)', async () => {
    const unknown = await runAmendsctl(['source-load', '--manifest', 'm', '--file', 'f', '--bogus'], env);
    expect(unknown.code).toBe(2);
    const missing = await runAmendsctl(['source-load', '--manifest', 'm'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--file is required');
    const badTimeout = await runAmendsctl(
      ['source-load', '--manifest', 'm', '--file', 'f', '--delivery-timeout-ms', 'soon'],
      env,
    );
    expect(badTimeout.code).toBe(2);
  });
});
