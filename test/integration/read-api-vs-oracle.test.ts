/**
 * `balances` and `explain` as of a bound against the independent oracle (issue 36 item 5): a
 * history is written into the store as the worker writes it (store-history.ts), the oracle
 * judges the same records (fast-oracle-run.ts), and at random bounds (one offset per
 * partition) the store's answers, read by the code the commands run (balance-pages.ts,
 * read-api.ts, explain-report.ts), must equal the oracle's cut at that bound (oracle-as-of.ts):
 * - every active day's balance;
 * - a day's versions up to the bound;
 * - a day's contributions (each transaction's revision then, from the record's own bytes), and
 *   the key's opening plus their quantities = the oracle's closing.
 *
 * Two kinds of history: random configurations and histories of every kind the engine's property
 * test draws (history-arbitraries.ts), small, many; and one ledger of the benchmark's traffic
 * (200,000 records by default, AMENDS_ORACLE_LEDGER_RECORDS to change) at 50 random bounds.
 * Replay a failing random run with AMENDS_FC_SEED=<seed> AMENDS_FC_PATH=<path>.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explanationDocument } from '../../src/cli/explain-report.js';
import { type NamespaceConfig, parseNamespaceConfig } from '../../src/domain/config.js';
import { ledgerTraffic } from '../../src/domain/ledger-traffic.js';
import { mulberry32 } from '../../src/domain/seeded-random.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { listedStockKeys } from '../../src/domain/stock-key-terms.js';
import { readBalances } from '../../src/io/store/balance-pages.js';
import { Database } from '../../src/io/store/postgres.js';
import { readContributions, readDayVersions } from '../../src/io/store/read-api.js';
import { apiSchemaFor } from '../../src/io/store/read-api-schema.js';
import { keyOrderSessionSql } from '../../src/verify/export-queries.js';
import { OracleKeyRules } from '../../src/verify/oracle-key-terms.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import { runFastOracle } from '../support/fast-oracle-run.js';
import { balancesAsOf, contributionsAsOf, versionsAsOf } from '../support/oracle-as-of.js';
import { registerTestNamespace, writeHistory } from '../support/store-history.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';
import { scenarioArb, v1Config } from '../unit/history-arbitraries.js';

let db: Database;
/** The session the answers are read in, set as the commands set theirs (no sorts). */
let reader: pg.PoolClient;
let api: string;

const admin = new pg.Client({ connectionString: testDatabaseUrl });
const schemas = new TestSchemas(admin, 'amends_test_api_oracle');

beforeAll(async () => {
  await admin.connect();
  // A schema of its own, migrated by this build: the API is exactly this build's.
  const url = urlForSchema(await schemas.fresh());
  db = await Database.open(url, 'amends-test read api vs oracle');
  reader = await db.pool.connect();
  await reader.query(keyOrderSessionSql);
  api = apiSchemaFor(url);
});

afterAll(async () => {
  reader?.release();
  await db?.close();
  await schemas.dropAll();
  await admin.end();
});

const fcParameters = {
  seed: process.env.AMENDS_FC_SEED === undefined ? undefined : Number(process.env.AMENDS_FC_SEED),
  path: process.env.AMENDS_FC_PATH,
};

interface Written {
  config: NamespaceConfig;
  records: readonly SourceRecord[];
  oracle: ReturnType<typeof runFastOracle>;
}

/** `records` written into a fresh namespace of `config`'s shape, and judged by the oracle. */
async function written(config: NamespaceConfig, records: readonly SourceRecord[], batch: number): Promise<Written> {
  const own = parseNamespaceConfig({ ...config, namespace: testName() });
  await registerTestNamespace(db, own);
  await writeHistory(db, own, records, batch);
  return { config: own, records, oracle: runFastOracle(own, records) };
}

async function storeBalances(w: Written, through: number[]) {
  const rows = [];
  const filter = { item: null, location: null, from: null, to: null };
  for await (const row of readBalances(reader, api, w.config.namespace, filter, through, 97)) rows.push(row);
  return rows;
}

/** One day of one key at one bound: the store's versions and explanation against the oracle's. */
async function expectDayAsOf(w: Written, key: { item: string; location: string; day: string }, through: number[]) {
  const label = `${key.item}@${key.location} ${key.day} as of ${through.join(',')}`;
  const want = versionsAsOf(w.oracle.versions, key, through);
  const full = { namespace: w.config.namespace, ...key };
  const versions = (await readDayVersions(reader, api, full)).filter(
    (v) => v.cause.offset <= (through[v.cause.partition] ?? -1),
  );
  expect(
    versions.map((v) => [v.version, v.closing, v.status, v.retracted, v.cause.partition, v.cause.offset]),
    label,
  ).toEqual(want.map((v) => [v.version, v.closing, v.status, v.retracted, v.cause.partition, v.cause.offset]));
  const current = want[want.length - 1];
  if (current === undefined || current.retracted) return;
  const contributions = await readContributions(reader, api, full, through);
  expect(
    contributions.map(({ txn, rev, day, qty, source }) => ({ txn, rev, day, qty, source })),
    label,
  ).toEqual(contributionsAsOf(w.records, w.oracle.decisions, key, through));
  // The oracle's own reading of the key's opening (oracle-key-terms.ts), not the engine's.
  const opening = new OracleKeyRules(w.config).of(key.item, key.location)?.opening as number;
  expect(
    contributions.reduce((sum, c) => sum + c.qty, opening),
    label,
  ).toBe(current.closing);
  // And the command's document checks the same sum against the stored closing.
  explanationDocument({
    ...full,
    opening,
    asOf: { kind: 'position', time: null, through },
    versions,
    later: 0,
    contributions,
    envelopes: false,
  });
}

/** A random bound: per partition, one of its offsets, or -1 (nothing of it). */
function randomThrough(w: Written, random: () => number): number[] {
  return Array.from({ length: w.config.partitions }, (_, p) => {
    const offsets = w.records.filter((r) => r.partition === p).map((r) => r.offset);
    const pick = Math.floor(random() * (offsets.length + 1));
    return pick === offsets.length ? -1 : (offsets[pick] as number);
  });
}

describe('the read API as of a bound, against the oracle', () => {
  it('on random configurations and histories of every kind', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.integer({ min: 1, max: 2 ** 31 - 1 }), async ({ config, records }, seed) => {
        const w = await written(config, records, 1 + (seed % 7));
        const random = mulberry32(seed);
        for (let i = 0; i < 3; i++) {
          const through = randomThrough(w, random);
          expect(await storeBalances(w, through), through.join(',')).toEqual(balancesAsOf(w.oracle.versions, through));
          const days = w.oracle.versions;
          const pick = days[Math.floor(random() * days.length)];
          if (pick !== undefined) await expectDayAsOf(w, pick, through);
        }
      }),
      { numRuns: 20, ...fcParameters },
    );
  });

  it('on a ledger of the benchmark traffic, at 50 random bounds', async () => {
    const count = Number(process.env.AMENDS_ORACLE_LEDGER_RECORDS ?? 200_000);
    const config = parseNamespaceConfig({ ...v1Config, stock_keys: v1Config.stock_keys });
    const traffic = ledgerTraffic({
      keys: listedStockKeys(config),
      postsPerDay: 40,
      firstDay: '2026-03-02',
      seed: 36,
      txnPrefix: 'X',
    });
    const next = new Map<number, number>();
    const records: SourceRecord[] = [];
    for (let i = 0; i < count; i++) {
      const r = traffic.next().value;
      const offset = next.get(r.partition) ?? 0;
      next.set(r.partition, offset + 1);
      records.push({ partition: r.partition, offset, key: r.key, value: r.value });
    }
    const w = await written(config, records, 2_000);
    const random = mulberry32(36);
    for (let i = 0; i < 50; i++) {
      const through = randomThrough(w, random);
      expect(await storeBalances(w, through), through.join(',')).toEqual(balancesAsOf(w.oracle.versions, through));
      if (i % 5 === 0) {
        const pick = w.oracle.versions[Math.floor(random() * w.oracle.versions.length)];
        if (pick !== undefined) await expectDayAsOf(w, pick, through);
      }
    }
  });
});
