/**
 * The bench's Kafka Streams peer (peers/kstreams, docs/benchmarks.md) against `amendsctl
 * simulate` on the same records: the four fixture stories, a seeded history of the bench's
 * ledger traffic (src/domain/ledger-traffic.ts: posts, corrections, cancels, redeliveries,
 * stale revisions, garbage) and raw records that break each kind of rule, published to a fresh
 * topic. The real peer (its cached build, 2 stream threads, exactly_once_v2) runs until its
 * group has committed every source offset; its output topic, read with read_committed, must
 * hold exactly simulate's output versions (item, location, day, version, closing, status,
 * retraction, cause), each keyed and routed as amends' output topic is, and its decisions
 * topic exactly simulate's decisions.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { BenchProcess } from '../../src/bench/bench-process.js';
import { kstreamsPeerDir, PeerAdmin, startKstreamsPeer, waitForPeerDrain } from '../../src/bench/kstreams-peer.js';
import type { Manifest } from '../../src/domain/config.js';
import { encodeFixtureFile } from '../../src/domain/fixture-line.js';
import { ledgerBacklog } from '../../src/domain/ledger-traffic.js';
import { listedStockKeys, stockKeyTerms } from '../../src/domain/stock-key-terms.js';
import { readTopicUpTo } from '../../src/verify/bounded-topic-reader.js';
import { requireBuild } from '../support/amendsctl-process.js';
import { testBrokers, testName } from '../support/endpoints.js';
import { allStories, twoKeysConfig } from '../support/fixture-stories.js';
import { TestProducer, type TestRecord } from '../support/kafka-source-fixtures.js';
import { createTestTopic, deleteTestTopics, endOffsets } from '../support/kafka-test-tools.js';
import { amendsctl, scratchFile, transportEnv } from '../support/transport-process.js';

const topics = new Set<string>();
const scratch = mkdtempSync(join(tmpdir(), 'amends-test-kstreams-'));
let peer: BenchProcess | undefined;
const historyRecords = 3_000;
const drainBudgetMs = 60_000;

afterAll(async () => {
  await peer?.stop();
  await deleteTestTopics(topics);
  rmSync(scratch, { recursive: true, force: true });
});

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const widgetKey = utf8('{"item":"widget","location":"berlin"}');

function envelope(fields: Record<string, unknown>): Buffer {
  return utf8(JSON.stringify({ schema: 1, op: 'post', item: 'widget', location: 'berlin', ...fields }));
}

/** Records that break each kind of rule (widget@berlin maps to partition 0), and a few valid oddities. */
function ruleBreakers(): TestRecord[] {
  const post = envelope({ txn: 'X1', rev: 1, day: '2026-03-03', qty: 5 });
  const onWidget = (value: Buffer | null, key: Buffer | null = widgetKey) => ({ partition: 0, key, value });
  return [
    onWidget(post, null), // KEY_MISMATCH: no key
    onWidget(null), // MALFORMED: no value
    onWidget(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), post])), // byte-order mark
    onWidget(Buffer.concat([utf8('{"schema":1,"txn":"T'), Buffer.from([0xc0, 0xaf]), utf8('"}')])), // overlong UTF-8
    onWidget(utf8(post.toString().replace('"qty":5', '"qty":5,"qty":5'))), // duplicate member
    onWidget(utf8(post.toString().replace('"rev":1', '"rev":1.0'))), // SCHEMA: not a plain integer
    onWidget(utf8(post.toString().replace('"qty":5', '"qty":1e2'))),
    onWidget(utf8(post.toString().replace('}', ',"note":[[[]]]}'))), // SCHEMA: unknown member
    onWidget(utf8(post.toString().replace('}', `,"note":${'['.repeat(64)}${']'.repeat(64)}}`))), // too deep
    onWidget(envelope({ txn: 'X\\ud800', rev: 1, day: '2026-03-03', qty: 5 })), // a lone surrogate, escaped twice: SCHEMA
    onWidget(utf8(post.toString().replace('"X1"', '"X\\ud800"'))), // MALFORMED: unpaired surrogate escape
    onWidget(post, utf8('{"item":"gadget","location":"paris"}')), // KEY_MISMATCH: another key
    onWidget(
      envelope({ txn: 'X2', rev: 1, item: 'bolt', day: '2026-03-03', qty: 5 }),
      utf8('{"item":"bolt","location":"berlin"}'),
    ), // UNKNOWN_KEY
    { partition: 1, key: widgetKey, value: post }, // ROUTING
    onWidget(envelope({ txn: 'X3', rev: 1, day: '2026-02-28', qty: 5 })), // BEFORE_ORIGIN
    onWidget(envelope({ txn: 'T1', rev: 1, day: '2026-03-02', qty: 1 })), // CONFLICT with the fixture's T1
    onWidget(post, utf8(' {"location" : "berlin", "it\\u0065m":"widget"}\n')), // a valid key, written otherwise
    onWidget(envelope({ txn: 'X4', rev: 3, op: 'cancel', day: undefined, qty: undefined })), // cancel of an unseen txn
    onWidget(
      utf8(envelope({ txn: 'X5', rev: 1, day: '2026-03-04', qty: 0 }).toString().replace('"qty":0', '"qty":-0')),
    ),
  ];
}

/** A day nobody else posts on, posted, cancelled and posted again (a retraction, then its count going on), and old days corrected. */
function lateRevisions(): TestRecord[] {
  const onWidget = (fields: Record<string, unknown>) => ({ partition: 0, key: widgetKey, value: envelope(fields) });
  return [
    onWidget({ txn: 'R1', rev: 1, day: '2027-01-01', qty: -500 }),
    onWidget({ txn: 'R1', rev: 2, op: 'cancel' }),
    onWidget({ txn: 'R1', rev: 3, day: '2027-01-01', qty: 7 }),
    onWidget({ txn: 'T3', rev: 2, day: '2026-03-20', qty: 10 }), // moves an early post 16 days later
    onWidget({ txn: 'T1', rev: 5, op: 'cancel' }), // the earliest day: every later closing moves
  ];
}

function expectedLines(stdout: string): { decisions: string[]; outputs: string[] } {
  const lines = stdout.trimEnd().split('\n');
  return {
    decisions: lines.filter((l) => l.startsWith('{"type":"decision"')),
    outputs: lines.filter((l) => l.startsWith('{"type":"output"')).sort(),
  };
}

it('derives exactly the decisions and output versions simulate derives', { timeout: 120_000 }, async () => {
  requireBuild();
  const dir = kstreamsPeerDir();
  const topic = testName('amends-test-kstreams');
  topics.add(topic);
  const manifestText = await amendsctl([
    ...['source-create', '--namespace', topic, '--topic', topic],
    ...['--config', twoKeysConfig, '--partitions', '2'],
  ]);
  const manifestPath = scratchFile(`${topic}.manifest.json`, manifestText);
  const config = (JSON.parse(manifestText) as Manifest).config;

  const history = ledgerBacklog(
    { keys: listedStockKeys(config), postsPerDay: 25, firstDay: '2026-03-02', seed: 34, txnPrefix: 'H' },
    historyRecords,
  );
  const toRecord = (r: { partition: number; key: Uint8Array; value: Uint8Array }) => ({
    partition: r.partition,
    key: Buffer.from(r.key),
    value: Buffer.from(r.value),
  });
  const half = historyRecords / 2;
  const records: TestRecord[] = [
    ...encodeFixtureFile(allStories(), config).map(toRecord),
    ...history.slice(0, half).map(toRecord),
    ...ruleBreakers(),
    ...history.slice(half).map(toRecord),
    ...lateRevisions(),
  ];
  const producer = await TestProducer.open();
  const offsets = await producer.send(topic, records).finally(() => producer.close());

  // simulate on the same bytes at the same offsets.
  const raw = records.map((r, i) =>
    JSON.stringify({
      partition: r.partition,
      offset: offsets[i],
      key_b64: r.key?.toString('base64') ?? null,
      value_b64: r.value?.toString('base64') ?? null,
    }),
  );
  const rawPath = join(scratch, 'records.jsonl');
  writeFileSync(rawPath, `${raw.join('\n')}\n`);
  const expected = expectedLines(await amendsctl(['simulate', '--manifest', manifestPath, '--file', rawPath]));
  expect(expected.decisions).toHaveLength(records.length);
  expect(expected.outputs.some((l) => l.includes('"retracted":true'))).toBe(true);

  const outputTopic = `${topic}-out`;
  const decisionsTopic = `${topic}-decisions`;
  const applicationId = `${topic}-app`;
  for (const t of [outputTopic, decisionsTopic]) {
    topics.add(t);
    await createTestTopic(t, 2);
  }
  // Kafka Streams' own topics: the stores' changelogs.
  for (const store of ['authority', 'days']) topics.add(`${applicationId}-${store}-changelog`);

  const ends = await endOffsets(topic, 2);
  peer = startKstreamsPeer(dir, {
    ...{ brokers: testBrokers, manifestPath, applicationId, outputTopic, decisionsTopic, threads: 2 },
    stateDir: join(scratch, 'state'),
    logPath: join(scratch, 'peer.log'),
    env: transportEnv,
  });
  const admin = new PeerAdmin(testBrokers);
  try {
    await waitForPeerDrain(admin, peer, { applicationId, topic, ends, everyMs: 200, budgetMs: drainBudgetMs });
  } finally {
    admin.close();
  }
  await peer.stop();
  // The JVM's status after SIGTERM when its shutdown hook (Kafka Streams' close) ended in time.
  expect(peer.exit).toEqual({ code: 143, signal: null });

  const decisions = (await readAll(decisionsTopic)).map((r) => {
    const line = JSON.parse(r.value) as { partition: number; offset: number };
    expect(r.partition, r.value).toBe(line.partition);
    return { line, text: r.value };
  });
  decisions.sort((a, b) => a.line.partition - b.line.partition || a.line.offset - b.line.offset);
  expect(decisions.map((d) => d.text)).toEqual(expected.decisions);

  const outputs = (await readAll(outputTopic)).map((r) => {
    const v = JSON.parse(r.value) as Record<string, unknown> & {
      item: string;
      location: string;
      day: string;
      cause: { partition: number; offset: number };
    };
    // Keyed and routed as amends' output topic: canonical (day, item, location), the stock key's partition.
    expect(r.key).toBe(JSON.stringify({ day: v.day, item: v.item, location: v.location }));
    expect(r.partition).toBe(stockKeyTerms(config, v.item, v.location)?.partition);
    expect(v.namespace).toBe(config.namespace);
    const { item, location, day, version, closing, status, retracted } = v;
    const cause = { partition: v.cause.partition, offset: v.cause.offset };
    return JSON.stringify({ type: 'output', item, location, day, version, closing, status, retracted, cause });
  });
  expect(outputs.sort()).toEqual(expected.outputs);
});

/** Every committed record of a topic of 2 partitions, keys and values as text. */
async function readAll(topic: string): Promise<{ partition: number; key: string | null; value: string }[]> {
  const ends = await endOffsets(topic, 2);
  const out: { partition: number; key: string | null; value: string }[] = [];
  const read = readTopicUpTo({
    brokers: testBrokers,
    topic,
    clientId: 'amends-test-kstreams-reader',
    groupId: testName('amends-test-kstreams-reader'),
    ends: new Map(ends.map((end, partition) => [partition, end])),
  });
  for await (const batch of read) {
    for (const r of batch) {
      out.push({
        partition: r.partition,
        key: r.key === null ? null : Buffer.from(r.key).toString('utf8'),
        value: Buffer.from(r.value ?? new Uint8Array()).toString('utf8'),
      });
    }
  }
  return out;
}
