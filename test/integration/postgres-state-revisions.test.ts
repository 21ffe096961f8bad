/**
 * The production store under configuration revisions made while it works
 * (docs/design.md#configuration-revisions): seeded random histories over a handful of keys,
 * decided in random batches on both partitions, with `config-revise`'s transaction run at
 * random points between batches; after every other revision the store is replaced by a fresh
 * one (a restart), after the others it is kept (its next commit is then refused and decided
 * again under the new chain).
 * What it committed must be what the engine decides record by record under the revision in
 * force at each offset, as read back from the database; every revision the rules refuse is
 * refused without writing anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConfigFile, type Manifest, type NamespaceConfig, parseNamespaceConfig } from '../../src/domain/config.js';
import { configAt, type RevisionChain } from '../../src/domain/config-revision.js';
import { decide } from '../../src/domain/decide.js';
import { decisionLine, outputLine, sortDecisions, sortOutputVersions } from '../../src/domain/export-lines.js';
import { murmur2Partition } from '../../src/domain/murmur2.js';
import { mulberry32 } from '../../src/domain/seeded-random.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { canonicalKeyBytes } from '../../src/domain/stock-key-terms.js';
import { registerNamespace } from '../../src/io/store/namespace-registry.js';
import { Database } from '../../src/io/store/postgres.js';
import { PostgresState } from '../../src/io/store/postgres-state.js';
import { reviseConfig } from '../../src/io/store/revise-config.js';
import { readRevisions } from '../../src/io/store/revision-registry.js';
import { AmendsError } from '../../src/kernel/amends-error.js';
import { collectLines, exportDecisionLines, exportOutputLines } from '../../src/verify/export-queries.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';

let db: Database;
const never = new AbortController().signal;
const partitions = 2;
const seeds = [1, 2, 3];
const recordsPerHistory = 240;
const batchMax = 10;
/** The chance, between two batches, of a revision. */
const reviseChance = 0.15;
const items = ['widget', 'gadget', 'gizmo'];
const locations = ['berlin', 'paris'];

beforeAll(async () => {
  db = await Database.open(testDatabaseUrl, 'amends-test store revisions');
});
afterAll(async () => {
  await db?.close();
});

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));

/** A history: posts, corrections and cancels of a few txns per key, mostly on the key's partition. */
function history(random: () => number): SourceRecord[] {
  const next = [0, 0];
  const revs = new Map<string, number>();
  return Array.from({ length: recordsPerHistory }, () => {
    const item = items[Math.floor(random() * items.length)] as string;
    const location = locations[Math.floor(random() * locations.length)] as string;
    const home = murmur2Partition(canonicalKeyBytes(item, location), partitions);
    const partition = random() < 0.9 ? home : 1 - home;
    const txn = `${item}-${location}-${Math.floor(random() * 4)}`;
    const rev = (revs.get(txn) ?? 0) + (random() < 0.2 ? 0 : 1);
    revs.set(txn, Math.max(rev, 1));
    const day = `2026-03-0${1 + Math.floor(random() * 5)}`;
    const envelope =
      random() < 0.15
        ? { schema: 1, txn, rev: Math.max(rev, 1), op: 'cancel', item, location }
        : { schema: 1, txn, rev: Math.max(rev, 1), op: 'post', item, location, day, qty: Math.floor(random() * 9) - 2 };
    const offset = next[partition] as number;
    next[partition] = offset + 1;
    return { partition, offset, key: utf8(JSON.stringify({ item, location })), value: utf8(JSON.stringify(envelope)) };
  });
}

/** A random next configuration: overrides for random keys, and a default rule or none. */
function drawFile(random: () => number): ConfigFile {
  const terms = () => ({ opening: Math.floor(random() * 20) - 5, threshold: Math.floor(random() * 10) });
  const listed = items.flatMap((item) => locations.map((location) => ({ item, location })));
  const stock_keys = listed.filter(() => random() < 0.15).map((k) => ({ ...k, ...terms() }));
  const rule = random();
  const default_stock_key = rule < 0.3 ? null : rule < 0.5 ? undefined : terms();
  return { schema_version: 2, ledger_origin: '2026-03-01', partitioner: 'murmur2', default_stock_key, stock_keys };
}

async function freshNamespace(): Promise<Manifest> {
  const config = parseNamespaceConfig({
    namespace: testName(),
    schema_version: 2,
    ledger_origin: '2026-03-01',
    partitions,
    partitioner: 'murmur2',
    stock_keys: [{ item: 'widget', location: 'berlin', opening: 100, threshold: 20 }],
    source_incarnation: `kafka:${'cd'.repeat(16)}`,
  });
  const manifest: Manifest = { source_topic: `${config.namespace}-topic`, config };
  await registerNamespace(db.pool, manifest);
  return manifest;
}

/** Decides the history through the store, revising and restarting at random; returns the revisions made and refused. */
async function run(manifest: Manifest, records: SourceRecord[], random: () => number) {
  const queues = [0, 1].map((p) => records.filter((r) => r.partition === p));
  let store = new PostgresState(db, manifest.config);
  const epochs = [0, 0];
  const frontiers = [0, 0];
  const counts = { revised: 0, refused: 0 };
  const claimAll = async () => {
    for (const p of [0, 1]) epochs[p] = (await store.claim(p, never)).epoch;
  };
  await claimAll();
  while (queues.some((q) => q.length > 0)) {
    const p = (queues[0]?.length ?? 0) > 0 && ((queues[1]?.length ?? 0) === 0 || random() < 0.5) ? 0 : 1;
    const batch = (queues[p] as SourceRecord[]).splice(0, 1 + Math.floor(random() * batchMax));
    const request = {
      partition: p,
      records: batch,
      epoch: epochs[p] as number,
      expectedFrontier: frontiers[p] as number,
    };
    const outcome = await store.process(request, never);
    frontiers[p] = (batch[batch.length - 1] as SourceRecord).offset + 1;
    expect(outcome).toEqual({ kind: 'acknowledged', frontier: frontiers[p] });
    if (random() >= reviseChance) continue;
    try {
      await reviseConfig(db, manifest, drawFile(random), 'drawn revision');
      counts.revised += 1;
    } catch (error) {
      if (!(error instanceof AmendsError)) throw error;
      counts.refused += 1;
    }
    // The first revision finds the store running (its next commit is refused), the next a restart, and so on.
    if (counts.revised % 2 === 0) {
      await store.close();
      store = new PostgresState(db, manifest.config);
      await claimAll();
    }
  }
  await store.close();
  return counts;
}

/** The engine, record by record, under the revision in force at each offset. */
function expected(chain: RevisionChain, records: readonly SourceRecord[]) {
  const state = new Map();
  const results = records.map((r) => decide(r, configAt(chain, r.partition, r.offset), state));
  return {
    decisions: sortDecisions(results.map((r) => r.decision)).map(decisionLine),
    outputs: sortOutputVersions(results.flatMap((r) => r.newVersions)).map(outputLine),
  };
}

describe('PostgresState under configuration revisions', () => {
  it.each(seeds)(
    'seed %i: commits what the engine decides under the revision in force at each offset',
    async (seed) => {
      const random = mulberry32(seed);
      const manifest = await freshNamespace();
      const records = history(random);
      const counts = await run(manifest, records, random);
      expect(counts.revised).toBeGreaterThan(0);
      const config: NamespaceConfig = manifest.config;
      const chain: RevisionChain = { base: config, revisions: await readRevisions(db.pool, config) };
      expect(chain.revisions).toHaveLength(counts.revised);
      const want = expected(chain, records);
      const ns = config.namespace;
      expect(await collectLines(exportDecisionLines(db.pool, ns))).toEqual(want.decisions);
      expect(await collectLines(exportOutputLines(db.pool, ns))).toEqual(want.outputs);
    },
  );
});
