/**
 * Property tests of configuration revisions (docs/design.md#configuration-revisions): on random
 * histories with random revisions made at the frontiers as the engine goes (revision-chains.ts),
 * the worker's engine, deciding each record under configAt, equals both oracles given the same
 * chain (the fast one of src/verify and the reference one, each with its own lookup of the
 * revision in force), whether it decides one record at a time or in batches cut where the
 * revision in force changes; and the chain it made reads back through parseRevisions.
 *
 * fast-check prints the seed and path of a failure; replay one with
 * AMENDS_FC_SEED=<seed> AMENDS_FC_PATH=<path> npx vitest run test/unit/revisions-vs-oracle.property.test.ts
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  baseChain,
  configAt,
  nextRevision,
  parseRevisions,
  type RevisionChain,
  revisionAt,
} from '../../src/domain/config-revision.js';
import { decide, decideBatch } from '../../src/domain/decide.js';
import type { Decision } from '../../src/domain/decision.js';
import { sortDecisions, sortOutputVersions } from '../../src/domain/export-lines.js';
import type { LedgerState } from '../../src/domain/ledger-state.js';
import type { OutputVersion } from '../../src/domain/output-version.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { runFastOracle, withoutDetail } from '../support/fast-oracle-run.js';
import { runOracle } from '../support/reference-oracle.js';
import { v1Config } from './history-arbitraries.js';
import { comparable, ledgerRecord } from './ledger-test-kit.js';
import { decideRevising, revisedScenarioArb } from './revision-chains.js';

const fcParameters = {
  seed: process.env.AMENDS_FC_SEED === undefined ? undefined : Number(process.env.AMENDS_FC_SEED),
  path: process.env.AMENDS_FC_PATH,
};
const propertyRuns = 150;
const batchRuns = 150;
/** Deciding alone (no oracle) is cheap: the fixed-seed count of what the runs exercised takes more. */
const countedRuns = 250;
const batchSizeMax = 8;

interface Run {
  decisions: Decision[];
  versions: OutputVersion[];
}

function sorted(run: Run): Run {
  return { decisions: sortDecisions(run.decisions), versions: sortOutputVersions(run.versions) };
}

/** The engine's run equals what both oracles say of the same records under the same chain. */
function expectOraclesAgree(chain: RevisionChain, records: readonly SourceRecord[], engine: Run): void {
  const reference = runOracle(chain.base, records, chain.revisions);
  const fast = runFastOracle(chain.base, records, chain.revisions);
  const { decisions, versions } = sorted(engine);
  expect(comparable(decisions)).toEqual(comparable(reference.decisions));
  expect(versions).toEqual(reference.versions);
  expect(fast.decisions).toEqual(reference.decisions.map(withoutDetail));
  expect(fast.versions).toEqual(reference.versions);
}

/** Each record in history order under the revision in force at its offset. */
function oneAtATime(chain: RevisionChain, records: readonly SourceRecord[]): Run {
  const state: LedgerState = new Map();
  const results = records.map((r) => decide(r, configAt(chain, r.partition, r.offset), state));
  return sorted({ decisions: results.map((r) => r.decision), versions: results.flatMap((r) => r.newVersions) });
}

/**
 * As a worker polls: partitions taking turns, `batchSize` records each, every batch cut where
 * the revision in force changes (decideBatch takes one configuration).
 */
function inRevisionBatches(chain: RevisionChain, records: readonly SourceRecord[], batchSize: number): Run {
  const run: Run = { decisions: [], versions: [] };
  const state: LedgerState = new Map();
  const partitions = Array.from({ length: chain.base.partitions }, (_, p) => p);
  const queues = partitions.map((p) => records.filter((r) => r.partition === p));
  while (queues.some((q) => q.length > 0)) {
    for (const queue of queues) {
      const batch = queue.splice(0, batchSize);
      while (batch.length > 0) {
        const first = batch[0] as SourceRecord;
        const revision = revisionAt(chain, first.partition, first.offset);
        const cut = batch.findIndex((r) => revisionAt(chain, r.partition, r.offset) !== revision);
        const segment = batch.splice(0, cut === -1 ? batch.length : cut);
        for (const r of decideBatch(segment, configAt(chain, first.partition, first.offset), state)) {
          run.decisions.push(r.decision);
          run.versions.push(...r.newVersions);
        }
      }
    }
  }
  return sorted(run);
}

describe('configuration revisions: the engine = both oracles', () => {
  it('on random histories with random revisions at the frontiers', () => {
    fc.assert(
      fc.property(revisedScenarioArb, (scenario) => {
        const run = decideRevising(scenario);
        expectOraclesAgree(run.chain, scenario.records, run);
        // As simulate decides, and a rebuild: the whole chain known from the start.
        expect(oneAtATime(run.chain, scenario.records)).toEqual(sorted(run));
      }),
      { numRuns: propertyRuns, ...fcParameters },
    );
  });

  it('in batches cut at the revisions, partitions taking turns, as one record at a time', () => {
    fc.assert(
      fc.property(revisedScenarioArb, fc.integer({ min: 1, max: batchSizeMax }), (scenario, batchSize) => {
        const run = decideRevising(scenario);
        expect(inRevisionBatches(run.chain, scenario.records, batchSize)).toEqual(sorted(run));
      }),
      { numRuns: batchRuns, ...fcParameters },
    );
  });

  it('the chain made reads back through parseRevisions, digests and all', () => {
    fc.assert(
      fc.property(revisedScenarioArb, (scenario) => {
        const { chain } = decideRevising(scenario);
        const read = parseRevisions(JSON.parse(JSON.stringify(chain.revisions)), chain.base);
        expect(read).toEqual(chain.revisions);
      }),
      { numRuns: batchRuns, ...fcParameters },
    );
  });

  it('histories make, refuse and pin revisions and decide under them (fixed seed: not vacuous)', () => {
    const seen = { revisions: 0, unchanged: 0, refused: 0, pinned: 0, appliedUnderRevision: 0, turnedStockKey: 0 };
    fc.assert(
      fc.property(revisedScenarioArb, (scenario) => {
        const run = decideRevising(scenario);
        seen.revisions += run.chain.revisions.length;
        seen.unchanged += run.unchanged;
        seen.refused += run.refused;
        seen.pinned += run.pinned;
        const revised = (d: Decision) => revisionAt(run.chain, d.partition, d.offset) > 1;
        seen.appliedUnderRevision += run.decisions.filter((d) => d.outcome === 'APPLIED' && revised(d)).length;
        seen.turnedStockKey += turnedStockKeys(run.decisions, revised);
      }),
      { numRuns: countedRuns, seed: 20261207 },
    );
    for (const [what, count] of Object.entries(seen)) expect(count, what).toBeGreaterThan(nonVacuousMin);
  });
});

/** How often each counter of the fixed-seed run must have counted, at least. */
const nonVacuousMin = 20;

/** APPLIED decisions under a later revision of keys that were UNKNOWN_KEY or ROUTING under revision 1. */
function turnedStockKeys(decisions: readonly Decision[], revised: (d: Decision) => boolean): number {
  const id = (d: Decision) => JSON.stringify([d.item, d.location]);
  const refused = new Set(
    decisions.filter((d) => !revised(d) && (d.outcome === 'UNKNOWN_KEY' || d.outcome === 'ROUTING')).map(id),
  );
  return decisions.filter((d) => revised(d) && d.outcome === 'APPLIED' && refused.has(id(d))).length;
}

const ghost = { item: 'ghost', location: 'nowhere' };
const post = (txn: string, qty: number) => ({ ...ghost, txn, rev: 1, day: '2026-03-02', qty });

describe('configuration revisions: examples', () => {
  it('a key a revision adds is UNKNOWN_KEY before its position and APPLIED, on its terms, from it on', () => {
    const terms = { partition: 1, opening: 7, threshold: 15 };
    const revised = { ...v1Config, stock_keys: [...v1Config.stock_keys, { ...ghost, ...terms }] };
    const from = [0, 1];
    const chain = { base: v1Config, revisions: [nextRevision(baseChain(v1Config), from, revised)] };
    const records = [
      ledgerRecord(0, post('T1', 5), terms.partition),
      ledgerRecord(1, post('T2', 5), terms.partition),
      // Partition 0 is under revision 2 from offset 0: the key is on partition 1 there.
      ledgerRecord(0, post('T3', 5), 0),
    ];
    const run = oneAtATime(chain, records);
    expectOraclesAgree(chain, records, run);
    expect(run.decisions.map((d) => [d.partition, d.offset, d.outcome])).toEqual([
      [0, 0, 'ROUTING'],
      [1, 0, 'UNKNOWN_KEY'],
      [1, 1, 'APPLIED'],
    ]);
    // 7 + 5 = 12: LOW under the revision's threshold 15.
    expect(run.versions.map((v) => [v.item, v.closing, v.status, v.cause.offset])).toEqual([['ghost', 12, 'LOW', 1]]);
  });
});
