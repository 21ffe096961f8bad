/**
 * Property tests (quality.md §1): on random histories — several keys (one unconfigured),
 * misrouted records, key mismatches, garbage bytes, schema failures, corrections, cancels,
 * redeliveries (also re-encoded), stale revisions, conflicts, days before the origin,
 * offset gaps — the incremental engine equals the independent oracle, and its result does
 * not depend on the batch size nor on where restarts cut the history.
 *
 * fast-check prints the seed and path of a failure; replay one with
 * AMENDS_FC_SEED=<seed> AMENDS_FC_PATH=<path> npx vitest run test/unit/engine-vs-oracle.property.test.ts
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type NamespaceConfig, parseNamespaceConfig } from '../../src/domain/config.js';
import { decideBatch } from '../../src/domain/decide.js';
import type { Decision } from '../../src/domain/decision.js';
import { sortDecisions, sortOutputVersions } from '../../src/domain/export-lines.js';
import {
  type KeyStateSnapshot,
  type LedgerState,
  restoreKeyState,
  snapshotKeyState,
} from '../../src/domain/ledger-state.js';
import type { OutputVersion } from '../../src/domain/output-version.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { runFastOracle, withoutDetail } from '../support/fast-oracle-run.js';
import { runOracle } from '../support/reference-oracle.js';
import { bytes, comparable } from './ledger-test-kit.js';
import { WindowedStore } from './windowed-store-model.js';

const config: NamespaceConfig = parseNamespaceConfig({
  namespace: 'property-test',
  schema_version: 1,
  ledger_origin: '2026-03-01',
  partitions: 2,
  stock_keys: [
    { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
    { item: 'bolt', location: 'berlin', partition: 0, opening: -5, threshold: 0 },
    { item: 'gadget', location: 'paris', partition: 1, opening: 0, threshold: 5 },
  ],
  source_incarnation: `kafka:${'a'.repeat(32)}`,
});

// The configured keys twice, so that the unconfigured one is not too frequent.
const stockKeys = [...config.stock_keys, ...config.stock_keys, { item: 'ghost', location: 'nowhere', partition: 1 }];
const days = ['2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03', '2026-03-05', '2026-03-10'];

const fcParameters = {
  seed: process.env.AMENDS_FC_SEED === undefined ? undefined : Number(process.env.AMENDS_FC_SEED),
  path: process.env.AMENDS_FC_PATH,
};

/** A record before it gets an offset. */
interface Template {
  partition: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

const envelopeFieldArbs = {
  txn: fc.constantFrom('T1', 'T2', 'T3', 'T4', 'T5'),
  rev: fc.integer({ min: 1, max: 3 }),
  op: fc.constantFrom('post', 'post', 'cancel'),
  day: fc.constantFrom(...days),
  // Mostly a few round quantities, so that corrections often change nothing, changes offset
  // each other, and closings land exactly on thresholds and zero.
  qty: fc.oneof(
    { arbitrary: fc.constantFrom(-40, -25, -20, -5, 0, 5, 20), weight: 4 },
    fc.integer({ min: -60, max: 60 }),
  ),
};
const envelopeArb = fc.record(envelopeFieldArbs);
type EnvelopeFields = typeof envelopeArb extends fc.Arbitrary<infer T> ? T : never;

/** The same envelope in different byte forms: the decision must not depend on the form. */
function envelopeBytes(item: string, location: string, e: EnvelopeFields, style: number): Uint8Array {
  const body: Record<string, unknown> =
    e.op === 'post'
      ? { schema: 1, txn: e.txn, rev: e.rev, op: e.op, item, location, day: e.day, qty: e.qty }
      : { schema: 1, txn: e.txn, rev: e.rev, op: e.op, item, location };
  if (style === 1) return bytes(JSON.stringify(body, null, 2));
  if (style === 2) return bytes(JSON.stringify(Object.fromEntries(Object.entries(body).reverse())));
  return bytes(JSON.stringify(body));
}

const keyBytes = (item: string, location: string) => bytes(JSON.stringify({ item, location }));

const wellFormedArb: fc.Arbitrary<Template> = fc
  .record({
    key: fc.constantFrom(...stockKeys),
    envelope: envelopeArb,
    style: fc.integer({ min: 0, max: 2 }),
    misrouted: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  })
  .map(({ key, envelope, style, misrouted }) => ({
    partition: misrouted ? 1 - key.partition : key.partition,
    key: keyBytes(key.item, key.location),
    value: envelopeBytes(key.item, key.location, envelope, style),
  }));

const invalidKeyArb = fc.oneof(
  fc.constant(null),
  fc.constant(bytes()),
  fc.constant(bytes('{"Item":"widget","location":"berlin"}')),
  fc.constant(bytes([0xef, 0xbb, 0xbf], '{"item":"widget","location":"berlin"}')),
  fc.uint8Array({ maxLength: 12 }),
);

const keyMismatchArb: fc.Arbitrary<Template> = fc
  .record({
    envelopeKey: fc.constantFrom(...stockKeys),
    otherKey: fc.constantFrom(...stockKeys),
    invalidKey: invalidKeyArb,
    useInvalid: fc.boolean(),
    envelope: envelopeArb,
  })
  .map(({ envelopeKey, otherKey, invalidKey, useInvalid, envelope }) => ({
    partition: envelopeKey.partition,
    key: useInvalid ? invalidKey : keyBytes(otherKey.item, otherKey.location),
    value: envelopeBytes(envelopeKey.item, envelopeKey.location, envelope, 0),
  }));

const brokenValueArb: fc.Arbitrary<Template> = fc
  .record({
    key: fc.constantFrom(...stockKeys),
    value: fc.oneof(
      fc.constant(null),
      fc.uint8Array({ maxLength: 16 }),
      fc
        .constantFrom(
          '{"schema":1,"txn":"T1","rev":0,"op":"post","item":"widget","location":"berlin","day":"2026-03-02","qty":1}',
          '{"schema":1,"txn":"T1","rev":1.0,"op":"post","item":"widget","location":"berlin","day":"2026-03-02","qty":1}',
          '{"schema":1,"txn":"T2","rev":2,"op":"cancel","item":"widget","location":"berlin","qty":1}',
          '{"schema":1,"txn":"T1","rev":1,"op":"post","item":"widget","location":"berlin","day":"2026-03-02","qty":1,"qty":1}',
          '{"schema":1,"txn":"T1","rev":3,"op":"post","item":"widget","location":"berlin","day":"2026-03-02","qty":5} x',
        )
        .map((s) => bytes(s)),
    ),
    partition: fc.integer({ min: 0, max: 1 }),
  })
  .map(({ key, value, partition }) => ({ partition, key: keyBytes(key.item, key.location), value }));

const templateArb: fc.Arbitrary<Template> = fc.oneof(
  { arbitrary: wellFormedArb, weight: 12 },
  { arbitrary: keyMismatchArb, weight: 1 },
  { arbitrary: brokenValueArb, weight: 2 },
);

/** Numbers templates per partition, in order, with occasional offset gaps. */
function numbered(templates: readonly { template: Template; gap: boolean }[]): SourceRecord[] {
  const next = [0, 0];
  return templates.map(({ template: t, gap }) => {
    const offset = (next[t.partition] ?? 0) + (gap ? 1 : 0);
    next[t.partition] = offset + 1;
    return { partition: t.partition, offset, key: t.key, value: t.value };
  });
}

/** Everything mixed: templates picked with repetition (redeliveries, also of garbage). */
const mixedHistoryArb: fc.Arbitrary<SourceRecord[]> = fc
  .record({
    templates: fc.array(templateArb, { minLength: 1, maxLength: 30, size: 'medium' }),
    picks: fc.array(fc.record({ index: fc.nat(), gap: fc.integer({ min: 0, max: 9 }) }), {
      maxLength: 80,
      size: 'max',
    }),
  })
  .map(({ templates, picks }) =>
    numbered(
      picks.map(({ index, gap }) => ({ template: templates[index % templates.length] as Template, gap: gap === 0 })),
    ),
  );

/** Well-formed records of configured keys only, with more revisions: corrections, cancels, re-activations. */
const ledgerHistoryArb: fc.Arbitrary<SourceRecord[]> = fc
  .array(
    fc.record({
      key: fc.constantFrom(...config.stock_keys),
      envelope: fc.record({ ...envelopeFieldArbs, rev: fc.integer({ min: 1, max: 6 }) }),
      style: fc.integer({ min: 0, max: 2 }),
    }),
    { maxLength: 60, size: 'max' },
  )
  .map((entries) =>
    numbered(
      entries.map(({ key, envelope, style }) => ({
        template: {
          partition: key.partition,
          key: keyBytes(key.item, key.location),
          value: envelopeBytes(key.item, key.location, envelope, style),
        },
        gap: false,
      })),
    ),
  );

const historyArb = fc.oneof(mixedHistoryArb, ledgerHistoryArb);

interface Run {
  decisions: Decision[];
  versions: OutputVersion[];
}

function collect(into: Run, records: readonly SourceRecord[], state: LedgerState): void {
  for (const r of decideBatch(records, config, state)) {
    into.decisions.push(r.decision);
    into.versions.push(...r.newVersions);
  }
}

function sorted(run: Run): Run {
  return { decisions: sortDecisions(run.decisions), versions: sortOutputVersions(run.versions) };
}

function continuous(records: readonly SourceRecord[]): Run {
  const run: Run = { decisions: [], versions: [] };
  collect(run, records, new Map());
  return sorted(run);
}

function byPartition(records: readonly SourceRecord[]): SourceRecord[][] {
  return [0, 1].map((p) => records.filter((r) => r.partition === p));
}

/** What a store does across a restart: everything through JSON, day totals optionally rebuilt. */
function reload(state: LedgerState, rebuildDayTotals: boolean): LedgerState {
  const saved = JSON.stringify([...state].map(([id, s]) => [id, snapshotKeyState(s)]));
  const loaded = JSON.parse(saved) as [string, KeyStateSnapshot][];
  return new Map(
    loaded.map(([id, s]) => [
      id,
      restoreKeyState(rebuildDayTotals ? { authority: s.authority, outputs: s.outputs } : s),
    ]),
  );
}

function expectWellFormedVersions(versions: readonly OutputVersion[]): void {
  const counts = new Map<string, number>();
  for (const v of versions) {
    const id = JSON.stringify([v.item, v.location, v.day]);
    const expected = (counts.get(id) ?? 0) + 1;
    expect(v.version).toBe(expected);
    counts.set(id, expected);
    expect(v.retracted).toBe(v.closing === null);
    expect(v.retracted).toBe(v.status === null);
  }
}

describe('incremental engine = independent oracle', () => {
  it('on random histories', () => {
    fc.assert(
      fc.property(historyArb, (records) => {
        const engine = continuous(records);
        const oracle = runOracle(config, records);
        expect(comparable(engine.decisions)).toEqual(comparable(oracle.decisions));
        expect(engine.versions).toEqual(oracle.versions);
        expectWellFormedVersions(engine.versions);
      }),
      { numRuns: 300, ...fcParameters },
    );
  });

  it('the fast oracle (src/verify) equals the reference oracle on random histories', () => {
    fc.assert(
      fc.property(historyArb, (records) => {
        const reference = runOracle(config, records);
        const fast = runFastOracle(config, records);
        expect(fast.decisions).toEqual(reference.decisions.map(withoutDetail));
        expect(fast.versions).toEqual(reference.versions);
      }),
      { numRuns: 500, ...fcParameters },
    );
  });

  it('histories reach every outcome (the generator is not vacuous; fixed seed, deterministic)', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(historyArb, (records) => {
        for (const d of continuous(records).decisions) seen.add(d.outcome);
      }),
      { numRuns: 200, seed: 20260301 },
    );
    expect([...seen].sort()).toEqual(
      [
        'APPLIED',
        'BEFORE_ORIGIN',
        'CONFLICT',
        'DUPLICATE',
        'KEY_MISMATCH',
        'MALFORMED',
        'ROUTING',
        'SCHEMA',
        'STALE',
        'UNKNOWN_KEY',
      ].sort(),
    );
  });
});

describe('the result does not depend on how the history is processed', () => {
  it('any batch size, partitions taking turns as a worker polls them', () => {
    fc.assert(
      fc.property(historyArb, fc.integer({ min: 1, max: 8 }), (records, batchSize) => {
        const run: Run = { decisions: [], versions: [] };
        const state: LedgerState = new Map();
        const queues = byPartition(records);
        while (queues.some((q) => q.length > 0)) {
          for (const queue of queues) collect(run, queue.splice(0, batchSize), state);
        }
        expect(sorted(run)).toEqual(continuous(records));
      }),
      { numRuns: 150, ...fcParameters },
    );
  });

  it('restarts at any cut points, resuming from the saved state', () => {
    fc.assert(
      fc.property(
        historyArb,
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.boolean(),
        (records, cutSeeds, rebuildDayTotals) => {
          const cuts = [...new Set(cutSeeds.map((c) => c % (records.length + 1)))].sort((a, b) => a - b);
          const run: Run = { decisions: [], versions: [] };
          let state: LedgerState = new Map();
          let from = 0;
          for (const cut of [...cuts, records.length]) {
            collect(run, records.slice(from, cut), state);
            state = reload(state, rebuildDayTotals);
            from = cut;
          }
          expect(sorted(run)).toEqual(continuous(records));
        },
      ),
      { numRuns: 150, ...fcParameters },
    );
  });
});

describe('a store that gives each batch only its window (key-window.ts)', () => {
  it('decides as the engine on the whole state, at any batch size', () => {
    fc.assert(
      fc.property(historyArb, fc.integer({ min: 1, max: 8 }), (records, batchSize) => {
        expect(sorted(inBatches(new WindowedStore(config), records, batchSize))).toEqual(continuous(records));
      }),
      { numRuns: 300, ...fcParameters },
    );
  });

  it('decides as the engine with the window cache of any size, at any batch size', () => {
    const limitsArb = fc.record({
      keysMax: fc.integer({ min: 1, max: 4 }),
      daysPerKeyMax: fc.integer({ min: 1, max: 5 }),
      txnsPerKeyMax: fc.integer({ min: 1, max: 5 }),
    });
    fc.assert(
      fc.property(historyArb, fc.integer({ min: 1, max: 8 }), limitsArb, (records, batchSize, limits) => {
        const run = inBatches(new WindowedStore(config, limits), records, batchSize);
        expect(sorted(run)).toEqual(continuous(records));
      }),
      { numRuns: 300, ...fcParameters },
    );
  });

  it('the cached histories serve windows and meet stale assumptions (fixed seed: not vacuous)', () => {
    let hits = 0;
    let stale = 0;
    fc.assert(
      fc.property(historyArb, (records) => {
        const store = new WindowedStore(config, { keysMax: 2, daysPerKeyMax: 2, txnsPerKeyMax: 2 });
        for (let from = 0; from < records.length; from += 2) store.decideBatch(records.slice(from, from + 2));
        hits += store.cacheHits;
        stale += store.staleRetries;
      }),
      { numRuns: 200, seed: 20261203 },
    );
    expect(hits).toBeGreaterThan(1000);
    expect(stale).toBeGreaterThan(10);
  });

  it('reads one day row per record when every record posts to a new latest day', () => {
    const store = new WindowedStore(config);
    const records = newLatestDayPosts(200);
    for (const record of records) store.decideBatch([record]);
    // The first batch reads nothing; each later one only the previous day (the carried closing).
    expect(store.dayRowsRead).toBe(records.length - 1);
  });

  it('with the cache, reads nothing after the first batch when every record posts to a new latest day', () => {
    const store = new WindowedStore(config, { keysMax: 4, daysPerKeyMax: 3, txnsPerKeyMax: 3 });
    const records = newLatestDayPosts(200);
    for (const record of records) store.decideBatch([record]);
    expect(store.dayRowsRead).toBe(0);
    expect(store.cacheHits).toBe(records.length - 1);
    expect(store.staleRetries).toBe(0);
  });
});

/** `n` posts of widget@berlin, each to a new latest day, at offsets 0… of partition 0. */
function newLatestDayPosts(n: number): SourceRecord[] {
  const days = Array.from({ length: n }, (_, i) => new Date(Date.UTC(2026, 2, 1 + i)).toISOString().slice(0, 10));
  return days.map((day, offset) => ({
    partition: 0,
    offset,
    key: bytes('{"item":"widget","location":"berlin"}'),
    value: bytes(
      `{"schema":1,"txn":"T${offset}","rev":1,"op":"post","item":"widget","location":"berlin","day":"${day}","qty":1}`,
    ),
  }));
}

/** Decides the records on the store in batches of `batchSize`, in order. */
function inBatches(store: WindowedStore, records: readonly SourceRecord[], batchSize: number): Run {
  const run: Run = { decisions: [], versions: [] };
  for (let from = 0; from < records.length; from += batchSize) {
    for (const r of store.decideBatch(records.slice(from, from + batchSize))) {
      run.decisions.push(r.decision);
      run.versions.push(...r.newVersions);
    }
  }
  return run;
}
