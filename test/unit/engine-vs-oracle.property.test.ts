/**
 * Property tests (quality.md §1): on random configurations of every version (history-arbitraries.ts)
 * and random histories — several keys (some never listed), misrouted records, key mismatches, garbage bytes, schema failures, corrections, cancels,
 * redeliveries (also re-encoded), stale revisions, conflicts, days before the origin,
 * offset gaps — the incremental engine equals the independent oracle, and its result does
 * not depend on the batch size nor on where restarts cut the history.
 *
 * fast-check prints the seed and path of a failure; replay one with
 * AMENDS_FC_SEED=<seed> AMENDS_FC_PATH=<path> npx vitest run test/unit/engine-vs-oracle.property.test.ts
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NamespaceConfig } from '../../src/domain/config.js';
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
import { type Scenario, scenarioArb, v1Config } from './history-arbitraries.js';
import { bytes, comparable } from './ledger-test-kit.js';
import { WindowedStore } from './windowed-store-model.js';

const fcParameters = {
  seed: process.env.AMENDS_FC_SEED === undefined ? undefined : Number(process.env.AMENDS_FC_SEED),
  path: process.env.AMENDS_FC_PATH,
};

interface Run {
  decisions: Decision[];
  versions: OutputVersion[];
}

function collect(into: Run, c: NamespaceConfig, records: readonly SourceRecord[], state: LedgerState): void {
  for (const r of decideBatch(records, c, state)) {
    into.decisions.push(r.decision);
    into.versions.push(...r.newVersions);
  }
}

function sorted(run: Run): Run {
  return { decisions: sortDecisions(run.decisions), versions: sortOutputVersions(run.versions) };
}

function continuous({ config, records }: Scenario): Run {
  const run: Run = { decisions: [], versions: [] };
  collect(run, config, records, new Map());
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
      fc.property(scenarioArb, ({ config, records }) => {
        const engine = continuous({ config, records });
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
      fc.property(scenarioArb, ({ config, records }) => {
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
      fc.property(scenarioArb, ({ config, records }) => {
        for (const d of continuous({ config, records }).decisions) seen.add(d.outcome);
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
  it('version 2 histories decide keys never listed and misroute by murmur2 (fixed seed: not vacuous)', () => {
    const seen = new Map<string, number>();
    const count = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1);
    fc.assert(
      fc.property(scenarioArb, ({ config, records }) => {
        if (config.schema_version !== 2 || config.partitioner !== 'murmur2') return;
        const listed = new Set(config.stock_keys.map((k) => `${k.item}@${k.location}`));
        for (const d of continuous({ config, records }).decisions) {
          const unlisted = d.item !== null && !listed.has(`${d.item}@${d.location}`);
          count(`${unlisted ? 'unlisted' : 'listed'} ${d.outcome}`);
        }
      }),
      { numRuns: 200, seed: 20260302 },
    );
    for (const what of ['unlisted APPLIED', 'unlisted UNKNOWN_KEY', 'unlisted ROUTING', 'listed ROUTING']) {
      expect(seen.get(what) ?? 0, what).toBeGreaterThan(10);
    }
  });
});

describe('the result does not depend on how the history is processed', () => {
  it('any batch size, partitions taking turns as a worker polls them', () => {
    fc.assert(
      fc.property(scenarioArb, fc.integer({ min: 1, max: 8 }), ({ config, records }, batchSize) => {
        const run: Run = { decisions: [], versions: [] };
        const state: LedgerState = new Map();
        const queues = byPartition(records);
        while (queues.some((q) => q.length > 0)) {
          for (const queue of queues) collect(run, config, queue.splice(0, batchSize), state);
        }
        expect(sorted(run)).toEqual(continuous({ config, records }));
      }),
      { numRuns: 150, ...fcParameters },
    );
  });

  it('restarts at any cut points, resuming from the saved state', () => {
    fc.assert(
      fc.property(
        scenarioArb,
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.boolean(),
        ({ config, records }, cutSeeds, rebuildDayTotals) => {
          const cuts = [...new Set(cutSeeds.map((c) => c % (records.length + 1)))].sort((a, b) => a - b);
          const run: Run = { decisions: [], versions: [] };
          let state: LedgerState = new Map();
          let from = 0;
          for (const cut of [...cuts, records.length]) {
            collect(run, config, records.slice(from, cut), state);
            state = reload(state, rebuildDayTotals);
            from = cut;
          }
          expect(sorted(run)).toEqual(continuous({ config, records }));
        },
      ),
      { numRuns: 150, ...fcParameters },
    );
  });
});

describe('a store that gives each batch only its window (key-window.ts)', () => {
  it('decides as the engine on the whole state, at any batch size', () => {
    fc.assert(
      fc.property(scenarioArb, fc.integer({ min: 1, max: 8 }), ({ config, records }, batchSize) => {
        expect(sorted(inBatches(new WindowedStore(config), records, batchSize))).toEqual(
          continuous({ config, records }),
        );
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
      fc.property(scenarioArb, fc.integer({ min: 1, max: 8 }), limitsArb, ({ config, records }, batchSize, limits) => {
        const run = inBatches(new WindowedStore(config, limits), records, batchSize);
        expect(sorted(run)).toEqual(continuous({ config, records }));
      }),
      { numRuns: 300, ...fcParameters },
    );
  });

  it('the cached histories serve windows and meet stale assumptions (fixed seed: not vacuous)', () => {
    let hits = 0;
    let stale = 0;
    fc.assert(
      fc.property(scenarioArb, ({ config, records }) => {
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
    const store = new WindowedStore(v1Config);
    const records = newLatestDayPosts(200);
    for (const record of records) store.decideBatch([record]);
    // The first batch reads nothing; each later one only the previous day (the carried closing).
    expect(store.dayRowsRead).toBe(records.length - 1);
  });

  it('with the cache, reads nothing after the first batch when every record posts to a new latest day', () => {
    const store = new WindowedStore(v1Config, { keysMax: 4, daysPerKeyMax: 3, txnsPerKeyMax: 3 });
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
