/**
 * The verifier's pure comparison (verification.md, step 5): a store that equals the oracle
 * PASSes; every kind of wrong, missing, extra or conflicting content FAILs and is named;
 * progress that has not reached the bound is INCOMPLETE, never a difference.
 */
import { describe, expect, it } from 'vitest';
import { type NamespaceConfig, parseConfigFile, parseNamespaceConfig } from '../../src/domain/config.js';
import type { Decision } from '../../src/domain/decision.js';
import { outputRecordKey, outputRecordValue } from '../../src/domain/export-lines.js';
import type { OutputVersion } from '../../src/domain/output-version.js';
import { parseSimulationInput } from '../../src/domain/simulation-input.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { type OutboxRow, type OutputTopicRecord, VerifyComparison } from '../../src/verify/verify-comparison.js';
import type { VerifyDocument } from '../../src/verify/verify-document.js';
import { runOracle } from '../support/reference-oracle.js';
import { fixture } from './worked-example-kit.js';

const config: NamespaceConfig = parseNamespaceConfig({
  namespace: 'verify-unit',
  partitions: 2,
  source_incarnation: `kafka:${'ab'.repeat(16)}`,
  ...parseConfigFile(JSON.parse(fixture('two-keys.config.json')), 2),
});

const garbage = (partition: number, offset: number) =>
  `{"partition":${partition},"offset":${offset},"key_b64":"","value_b64":"${Buffer.from('not json').toString('base64')}"}\n`;
const input = ['before.jsonl', 'second-key.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'].map(fixture).join('');
const records: SourceRecord[] = parseSimulationInput(input, config);
// One quarantined record at the end of partition 1, with an empty (not null) key.
records.push(...parseSimulationInput(garbage(1, 7), config));
const oracle = runOracle(config, records);
const enc = new TextEncoder();

/** A quarantined decision of the store with its raw bytes (the store keeps them on the decision row). */
interface QuarantineRow {
  decision: Decision;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

/** What a correct, drained system holds: everything the oracle says, published, on the topic, viewed. */
interface Store {
  ends: Map<number, number>;
  frontiers: Map<number, number>;
  bound: boolean;
  decisions: typeof oracle.decisions;
  quarantine: QuarantineRow[];
  outputs: OutputVersion[];
  outbox: OutboxRow[];
  outputEnds: Map<number, number>;
  topic: OutputTopicRecord[];
  viewFrontiers: Map<number, number>;
  view: OutputVersion[];
}

function partitionOf(v: OutputVersion): number {
  return v.item === 'widget' ? 0 : 1;
}

/** `frontiers`: how far the worker got (default: to every end); everything caused before is relayed and viewed. */
function drainedStore(frontiers?: Map<number, number>): Store {
  const ends = new Map<number, number>();
  for (const r of records) ends.set(r.partition, Math.max(ends.get(r.partition) ?? 0, r.offset + 1));
  const reached = frontiers ?? new Map(ends);
  const decided = (at: { partition: number; offset: number }) => at.offset < (reached.get(at.partition) ?? 0);
  const versions = oracle.versions.filter((v) => decided(v.cause));
  const topic: OutputTopicRecord[] = [];
  const outputEnds = new Map([
    [0, 0],
    [1, 0],
  ]);
  for (const v of versions) {
    const partition = partitionOf(v);
    const offset = outputEnds.get(partition) ?? 0;
    outputEnds.set(partition, offset + 1);
    topic.push({
      partition,
      offset,
      key: enc.encode(outputRecordKey(v)),
      value: enc.encode(outputRecordValue(v, config.namespace)),
    });
  }
  const latest = new Map<string, OutputVersion>();
  for (const v of versions) latest.set(`${v.item}/${v.location}/${v.day}`, v);
  const byOffset = new Map(records.map((r) => [`${r.partition}:${r.offset}`, r]));
  const decisions = oracle.decisions.filter(decided);
  return {
    ends,
    frontiers: new Map(reached),
    bound: true,
    decisions: decisions.map((d) => ({ ...d })),
    quarantine: decisions
      .filter((d) => d.quarantined)
      .map((d) => {
        const raw = byOffset.get(`${d.partition}:${d.offset}`) as SourceRecord;
        return { decision: { ...d }, key: raw.key, value: raw.value };
      }),
    outputs: versions.map((v) => ({ ...v })),
    outbox: versions.map((v) => ({
      partition: partitionOf(v),
      item: v.item,
      location: v.location,
      day: v.day,
      version: v.version,
      key: enc.encode(outputRecordKey(v)),
      value: enc.encode(outputRecordValue(v, config.namespace)),
      published: true,
    })),
    outputEnds,
    topic,
    viewFrontiers: new Map(outputEnds),
    view: [...latest.values()].map((v) => ({ ...v })),
  };
}

/** Feeds the comparison the way verify-run.ts does: per partition, source and store merged by offset, then the rest. */
function compare(store: Store): VerifyDocument {
  const c = new VerifyComparison({ config, ends: store.ends, frontiers: store.frontiers, bound: store.bound });
  const raw = new Map(store.quarantine.map((q) => [`${q.decision.partition}:${q.decision.offset}`, q]));
  const rows = [...store.decisions].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  for (const partition of [...store.ends.keys()].sort((a, b) => a - b)) {
    c.startPartition(partition);
    for (const r of records.filter((x) => x.partition === partition)) c.sourceRecord(r);
    for (const d of rows.filter((x) => x.partition === partition)) {
      const q = raw.get(`${d.partition}:${d.offset}`);
      c.storedDecision({
        ...d,
        key: d.quarantined ? (q?.key ?? null) : null,
        value: d.quarantined ? (q?.value ?? null) : null,
      });
    }
    c.endPartition(partition);
  }
  for (const d of rows.filter((x) => !store.ends.has(x.partition))) c.strayDecision({ ...d, key: null, value: null });
  for (const v of store.outputs) c.outputVersion(v);
  for (const e of store.outbox) c.outboxRow(e);
  if (store.bound) {
    c.outputTopicEnds(store.outputEnds);
    for (const r of store.topic) c.topicRecord(r);
    c.viewPartitions(store.viewFrontiers);
    for (const v of store.view) c.viewRow(v);
  }
  return c.finish();
}

const kindsAndKeys = (d: VerifyDocument) => d.differences.map((x) => `${x.kind} ${x.key}`);

describe('verify comparison', () => {
  it('a drained store equal to the oracle passes, with every count', () => {
    const store = drainedStore();
    const report = compare(store);
    expect(report).toEqual({
      verdict: 'PASS',
      reasons: [],
      partitions: [
        { partition: 0, frontier: 10, end: 10 },
        { partition: 1, frontier: 8, end: 8 },
      ],
      counts: { records: 18, decisions: 18, outputs: 17, quarantine: 1, outbox_pending: 0, view_rows: 7 },
      differences: [],
    });
    // The quarantined record really is the garbage one, with its empty key.
    expect(store.quarantine.map((q) => [q.decision.outcome, q.key?.length])).toEqual([['MALFORMED', 0]]);
  });

  it('a tampered output version fails, naming it with both contents', () => {
    const store = drainedStore();
    const target = store.outputs[2] as OutputVersion;
    target.closing = (target.closing ?? 0) + 1;
    const report = compare(store);
    expect(report.verdict).toBe('FAIL');
    expect(kindsAndKeys(report)).toEqual([`output ${target.item}@${target.location} ${target.day} v${target.version}`]);
    expect(report.differences[0]?.got).toMatchObject({ closing: target.closing });
    expect(report.differences[0]?.want).toMatchObject({ closing: target.closing - 1 });
    expect(report.reasons).toEqual([
      `output: 1 difference, first at ${target.item}@${target.location} ${target.day} v${target.version}`,
    ]);
  });

  it('a tampered, missing or extra decision fails', () => {
    const store = drainedStore();
    (store.decisions[3] as { outcome: string }).outcome = 'DUPLICATE';
    store.decisions.splice(4, 1);
    store.decisions.push({ ...(store.decisions[0] as (typeof store.decisions)[0]), partition: 1, offset: 42 });
    const report = compare(store);
    expect(report.verdict).toBe('FAIL');
    // Merged in offset order: listed per partition, by offset.
    expect(kindsAndKeys(report)).toEqual(['decision 0:3', 'decision 0:4', 'decision 1:42']);
    expect(report.differences[1]).toMatchObject({ got: null, want: { outcome: 'APPLIED' } });
  });

  it('quarantine is compared on its raw bytes: null is not empty', () => {
    const store = drainedStore();
    (store.quarantine[0] as QuarantineRow).key = null;
    const report = compare(store);
    expect(kindsAndKeys(report)).toEqual(['quarantine 1:7']);
    expect(report.differences[0]).toMatchObject({ want: { key_b64: '' }, got: { key_b64: null } });
  });

  it('a frontier below its end (a trailing control-record gap) is INCOMPLETE, not a difference', () => {
    const store = drainedStore();
    store.ends.set(1, 10); // e.g. an aborted record and its marker after the last data record
    const report = compare(store);
    expect(report.verdict).toBe('INCOMPLETE');
    expect(report.reasons).toEqual(['partition 1: frontier 8 below end 10']);
    expect(report.differences).toEqual([]);
  });

  it('a worker midway is INCOMPLETE: what lies past its frontier is not missing', () => {
    const report = compare(
      drainedStore(
        new Map([
          [0, 6],
          [1, 8],
        ]),
      ),
    );
    expect(report.verdict, JSON.stringify(report)).toBe('INCOMPLETE');
    expect(report.differences).toEqual([]);
    expect(report.reasons).toEqual(['partition 0: frontier 6 below end 10']);
  });

  it('a decision beyond the frontier fails', () => {
    const store = drainedStore(
      new Map([
        [0, 9],
        [1, 8],
      ]),
    );
    store.decisions.push({ ...(oracle.decisions[9] as (typeof oracle.decisions)[0]) });
    const report = compare(store);
    expect(report.verdict).toBe('FAIL');
    expect(kindsAndKeys(report)).toEqual(['decision 0:9']);
  });

  it('pending outbox envelopes are "relay behind"; an unpublished version must not be missing from the topic', () => {
    const store = drainedStore();
    const pending = store.outbox[store.outbox.length - 1] as OutboxRow;
    pending.published = false;
    store.topic = store.topic.filter((r) => !Buffer.from(r.value as Uint8Array).equals(Buffer.from(pending.value)));
    store.outputEnds.set(pending.partition, (store.outputEnds.get(pending.partition) ?? 0) - 1);
    store.viewFrontiers = new Map(store.outputEnds);
    store.view = store.view.filter((v) => !(v.day === pending.day && v.item === pending.item));
    const report = compare(store);
    expect(report.verdict, JSON.stringify(report)).toBe('INCOMPLETE');
    expect(report.reasons).toEqual([
      'relay behind: 1 outbox envelopes not yet published',
      "view behind: 1 of 7 (item, location, day) rows not yet at the database's latest version",
    ]);
    expect(report.counts.outbox_pending).toBe(1);
  });

  it('a version marked published but absent from the topic fails', () => {
    const store = drainedStore();
    store.topic.splice(0, 1);
    const report = compare(store);
    expect(report.verdict).toBe('FAIL');
    expect(kindsAndKeys(report)).toEqual(['topic gadget@paris 2026-03-02 v1']);
  });

  it('identical duplicates on the topic pass; a conflicting or an extra record fails', () => {
    const store = drainedStore();
    const first = store.topic[0] as OutputTopicRecord;
    const at = (partition: number) => store.outputEnds.get(partition) ?? 0;
    store.topic.push({ ...first, offset: at(first.partition) });
    store.outputEnds.set(first.partition, at(first.partition) + 1);
    store.viewFrontiers = new Map(store.outputEnds);
    expect(compare(store).verdict).toBe('PASS');

    const conflicting = JSON.parse(new TextDecoder().decode(first.value as Uint8Array));
    conflicting.closing += 1;
    store.topic.push({ ...first, offset: at(first.partition), value: enc.encode(JSON.stringify(conflicting)) });
    store.topic.push({ partition: 0, offset: at(0) + 1, key: null, value: enc.encode('not an envelope') });
    const report = compare(store);
    expect(report.verdict).toBe('FAIL');
    expect(kindsAndKeys(report)).toEqual(['topic gadget@paris 2026-03-02 v1', `topic 0:${at(0) + 1}`]);
  });

  it('a view behind is INCOMPLETE; a wrong view row, or one the view read past, fails', () => {
    const behind = drainedStore();
    behind.view = [];
    behind.viewFrontiers = new Map([
      [0, 0],
      [1, 0],
    ]);
    const incomplete = compare(behind);
    expect(incomplete.verdict).toBe('INCOMPLETE');
    expect(incomplete.reasons).toEqual([
      'view partition 0: frontier 0 below output topic end 10',
      'view partition 1: frontier 0 below output topic end 7',
      "view behind: 7 of 7 (item, location, day) rows not yet at the database's latest version",
    ]);

    const wrong = drainedStore();
    const row = wrong.view[0] as OutputVersion;
    row.closing = (row.closing ?? 0) + 5;
    const failed = compare(wrong);
    expect(failed.verdict).toBe('FAIL');
    expect(kindsAndKeys(failed)).toEqual([`view ${row.item}@${row.location} ${row.day}`]);

    const skipped = drainedStore();
    skipped.view.splice(0, 1); // the view's frontier is past every record, yet this row is gone
    expect(kindsAndKeys(compare(skipped))).toEqual(['view gadget@paris 2026-03-02']);
  });

  it('without an output binding the source side can pass, and says what it did not compare', () => {
    const store = drainedStore();
    store.bound = false;
    for (const e of store.outbox) e.published = false;
    const report = compare(store);
    expect(report.verdict).toBe('PASS');
    expect(report.reasons).toEqual([
      'no output binding: outbox delivery, the output topic and the view were not compared (amendsctl output-create binds one)',
    ]);
  });

  it('a decision of a partition the source does not have fails', () => {
    const store = drainedStore();
    store.decisions.push({ ...(store.decisions[0] as (typeof store.decisions)[0]), partition: 2, offset: 0 });
    const report = compare(store);
    expect(report.verdict).toBe('FAIL');
    expect(kindsAndKeys(report)).toEqual(['decision 2:0']);
    expect(report.counts.decisions).toBe(19);
  });

  it('lists at most 100 differences and counts them all', () => {
    const store = drainedStore();
    for (let i = 0; i < 150; i++) {
      store.decisions.push({ ...(store.decisions[0] as (typeof store.decisions)[0]), partition: 1, offset: 100 + i });
    }
    const report = compare(store);
    expect(report.differences).toHaveLength(100);
    expect(report.reasons).toEqual([
      'decision: 150 differences, first at 1:100',
      '150 differences in all, the first 100 listed',
    ]);
  });
});
