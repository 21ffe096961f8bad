/**
 * Each question of the SQL read API is an index range of the key it asks about, not a scan of
 * the namespace (issue 36 item 4): explain's versions and contributions as of a bound, a page of
 * balances for one key's days and a page of the whole namespace, and positions_at's binary search.
 *
 * Asked as explain and balances ask (in a read-only transaction with `enable_sort = off`, the
 * setting of every page read, export-queries.ts: a table analyzed while empty otherwise made the
 * planner sort a whole seq scan of output_days for each page) under three kinds of statistics
 * (autovacuum off, so they stay as made): tables analyzed while empty, as in a new database, then a ledger written as the
 * worker writes it; another namespace analyzed and the asked one written after (as
 * verify-read-plans.test.ts does); and everything analyzed.
 *
 * Two views of each: the plan (no sequential scan of a per-record table, every scan an index's
 * range), and the rows the question made PostgreSQL read (pg_stat_xact_user_tables, counted
 * inside the question's transaction, independent of the plan's shape): bounded by the key's
 * share, or for positions_at by the logarithm of the partitions, never the namespace's.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNamespaceConfig } from '../../src/domain/config.js';
import { ledgerTraffic } from '../../src/domain/ledger-traffic.js';
import { listedStockKeys } from '../../src/domain/stock-key-terms.js';
import { balancePageSql } from '../../src/io/store/balance-pages.js';
import { Database } from '../../src/io/store/postgres.js';
import { keyOrderReadsSql } from '../../src/verify/export-queries.js';
import { fillUnbounded, registerBoundNamespace } from '../support/bound-namespace-rows.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import { registerTestNamespace, writeHistory } from '../support/store-history.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';
import { v1Config } from '../unit/history-arbitraries.js';

const admin = new pg.Client({ connectionString: testDatabaseUrl });
const schemas = new TestSchemas(admin, 'amends_test_api_plans');
let db: Database;
let api: string;

/** 10 keys, 1,000 transactions each (two APPLIED revisions apiece), 5 a day: 200 days per key. */
const keys = 10;
const txnsPerKey = 1_000;
const txns = keys * txnsPerKey;
const perDay = 5;
const tables = ['decisions', 'authority', 'output_versions', 'output_days'];

/**
 * A namespace's rows, all on partition 0: transaction j of key j % 10 (item `i0…i9`) posted at
 * offset 2j (rev 1) and corrected at 2j + 1 (rev 2), decided one second apart; per key and day
 * three versions, caused by that day's transactions.
 */
async function fill(namespace: string): Promise<void> {
  const ns = await registerBoundNamespace(db.pool, namespace, '2026-01-01');
  const day = (txn: string) => `to_char(date '2026-01-01' + (${txn} / ${keys}) / ${perDay}, 'YYYY-MM-DD')`;
  const envelope = `convert_to(json_build_object('schema', 1, 'txn', 'T' || j, 'rev', r, 'op', 'post',
                      'item', 'i' || (j % ${keys}), 'location', 'berlin', 'day', ${day('j')}, 'qty', r)::text, 'UTF8')`;
  await fillUnbounded(db.pool, [
    [
      `INSERT INTO decisions (ns, partition, record_offset, outcome, item, location, txn, rev, raw_key, raw_value,
                              quarantined, detail, epoch, decided_at)
       SELECT $1, 0, 2 * j + r - 1, 'APPLIED', 'i' || (j % ${keys}), 'berlin', 'T' || j, r, '\\x00', ${envelope},
              false, NULL, 1, timestamptz '2026-01-01 00:00:00Z' + (2 * j + r - 1) * interval '1 second'
         FROM generate_series(0, $2::int - 1) AS j CROSS JOIN generate_series(1, 2) AS r`,
      [ns, txns],
    ],
    [
      `INSERT INTO authority (ns, item, location, txn, rev, op, day, qty, cause_partition, cause_offset)
       SELECT $1, 'i' || (j % ${keys}), 'berlin', 'T' || j, 2, 'post', ${day('j')}, 2, 0, 2 * j + 1
         FROM generate_series(0, $2::int - 1) AS j`,
      [ns, txns],
    ],
    [
      `INSERT INTO output_versions (ns, item, location, day, version, closing, status, retracted, cause_partition,
                                    cause_offset, record_key, record_value)
       SELECT $1, 'i' || k, 'berlin', to_char(date '2026-01-01' + d, 'YYYY-MM-DD'), v, 100, 'OK', false, 0,
              2 * ((d * ${perDay} + v) * ${keys} + k), '\\x00', '\\x00'
         FROM generate_series(0, ${keys - 1}) AS k, generate_series(0, $2::int / ${keys * perDay} - 1) AS d,
              generate_series(1, 3) AS v`,
      [ns, txns],
    ],
    [
      `INSERT INTO output_days (ns, item, location, day, version, closing, status, retracted, cause_partition,
                                cause_offset, qty, posts)
       SELECT ns, item, location, day, max(version), 100, 'OK', false, 0, max(cause_offset), 10, ${perDay}
         FROM output_versions WHERE ns = $1 GROUP BY ns, item, location, day`,
      [ns],
    ],
    [
      `INSERT INTO partitions (namespace, partition, epoch, frontier) VALUES ($1, 0, 1, 2 * $2::int)`,
      [namespace, txns],
    ],
  ]);
}

interface Question {
  sql: string;
  values: unknown[];
  maxRows: Partial<Record<string, number>>;
  /** False for a PL/pgSQL function: its statements are planned inside it, only its reads show. */
  plan?: false;
}

/** What the questions ask about, and how many rows of each kind the answers may read. */
interface Subject {
  namespace: string;
  item: string;
  /** A day of the key and a bound at which some of its transactions were not decided yet. */
  day: string;
  through: string[];
  /** A range of the key's days, and a key after which a page of the whole namespace starts. */
  range: [string, string];
  pageAfter: [string, string, string];
  /** Each partition's last decided offset (the commands' "now"), and a decision time. */
  now: string[];
  at: string;
  most: { keyTxns: number; dayVersions: number; rangeDays: number; rangeVersions: number; probes: number };
}

/** Key i3 of a synthetic namespace (fill): a tenth of it. */
function synthetic(namespace: string): Subject {
  // Halfway through partition 0 (transaction 5,000's first revision, on day 100), and a day just after.
  return {
    namespace,
    item: 'i3',
    day: '2026-04-15',
    through: [String(txns)],
    range: ['2026-02-01', '2026-03-01'],
    pageAfter: ['i3', 'berlin', '2026-03-01'],
    now: [String(2 * txns - 1)],
    at: new Date(Date.UTC(2026, 0, 1) + txns * 1000).toISOString(),
    // 29 days of the range, 3 versions a day; one decision per halving of the 20,000 offsets.
    most: { keyTxns: txnsPerKey, dayVersions: 3, rangeDays: 29, rangeVersions: 3 * 29, probes: 16 },
  };
}

/**
 * A ledger of the benchmark's traffic written as the worker writes it (store-history.ts): three
 * keys on two partitions, every outcome. Its key widget@berlin, at a bound a third of the way in.
 */
async function ledger(namespace: string, records: number): Promise<Subject> {
  const config = parseNamespaceConfig({ ...v1Config, namespace });
  await registerTestNamespace(db, config);
  const traffic = ledgerTraffic({
    keys: listedStockKeys(config),
    postsPerDay: 40,
    firstDay: '2026-03-02',
    seed: 7,
    txnPrefix: 'P',
  });
  const next = [0, 0];
  const written = Array.from({ length: records }, () => {
    const r = traffic.next().value;
    const offset = next[r.partition] as number;
    next[r.partition] = offset + 1;
    return { partition: r.partition, offset, key: r.key, value: r.value };
  });
  await writeHistory(db, config, written, 2_000);
  const count = async (from: string, values: unknown[]) =>
    Number((await db.pool.query(`SELECT count(*) AS n FROM ${api}.${from}`, values)).rows[0].n);
  const through = next.map((end) => String(Math.floor(end / 3)));
  const days = await db.pool.query(
    `SELECT min(day) AS first, max(day) AS last FROM ${api}.latest_versions WHERE namespace = $1 AND item = 'widget'`,
    [namespace],
  );
  const { first, last } = days.rows[0] as { first: string; last: string };
  const rangeEnd = new Date(Date.parse(first) + 30 * 86_400_000).toISOString().slice(0, 10);
  const inRange = `namespace = $1 AND item = 'widget' AND day BETWEEN $2 AND $3`;
  const at = await db.pool.query(
    `SELECT decided_at::text AS at FROM ${api}.decisions WHERE namespace = $1 AND partition = 0 AND record_offset = $2`,
    [namespace, through[0]],
  );
  return {
    namespace,
    item: 'widget',
    day: last,
    through,
    range: [first, rangeEnd],
    pageAfter: ['', '', ''],
    now: next.map((end) => String(end - 1)),
    at: at.rows[0].at,
    most: {
      keyTxns: await count(`transactions WHERE namespace = $1 AND item = 'widget'`, [namespace]),
      dayVersions: await count(`balance_versions WHERE namespace = $1 AND item = 'widget' AND day = $2`, [
        namespace,
        last,
      ]),
      rangeDays: await count(`latest_versions WHERE ${inRange}`, [namespace, first, rangeEnd]),
      rangeVersions: await count(`balance_versions WHERE ${inRange}`, [namespace, first, rangeEnd]),
      probes: next.reduce((sum, end) => sum + Math.ceil(Math.log2(end)) + 1, 0),
    },
  };
}

/** The questions, each about one key or one page, with what each may read. */
function questions(s: Subject): Record<string, Question> {
  return {
    'explain: versions as of': {
      sql: `SELECT * FROM ${api}.versions_as_of($1, $2, 'berlin', $3, $4::bigint[])`,
      values: [s.namespace, s.item, s.day, s.through],
      maxRows: { output_versions: s.most.dayVersions, decisions: s.most.dayVersions },
    },
    'explain: contributions as of': {
      sql: `SELECT * FROM ${api}.contributions_as_of($1, $2, 'berlin', $3, $4::bigint[])`,
      values: [s.namespace, s.item, s.day, s.through],
      // Each transaction of the key once, and one step of its revision as of the bound.
      maxRows: { authority: s.most.keyTxns, decisions: s.most.keyTxns },
    },
    'balances: one key, a range of days': {
      sql: balancePageSql(api),
      values: [s.namespace, s.through, s.item, 'berlin', ...s.range, '', '', '', 5_000],
      maxRows: { output_days: s.most.rangeDays, output_versions: s.most.rangeVersions },
    },
    // As of now, as the commands fix it: every day is active.
    'balances: a page of the namespace': {
      sql: balancePageSql(api),
      values: [s.namespace, s.now, null, null, null, null, ...s.pageAfter, 500],
      maxRows: { output_days: 500, output_versions: 500 },
    },
    'as of a time: positions_at': {
      sql: `SELECT ${api}.positions_at($1, $2::timestamptz)`,
      values: [s.namespace, s.at],
      maxRows: { decisions: s.most.probes },
      plan: false,
    },
  };
}

/** In a read-only transaction with the settings the commands read with (keyOrderReadsSql). */
async function inReadTransaction<T>(read: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN READ ONLY');
    await client.query(keyOrderReadsSql);
    const result = await read(client);
    await client.query('COMMIT');
    return result;
  } finally {
    client.release();
  }
}

/** Every scan of a per-record table in a plan (the registry of namespaces is small): node type, relation, index. */
async function planScans(question: Question): Promise<string[]> {
  const explained = await inReadTransaction((c) => c.query(`EXPLAIN (FORMAT JSON) ${question.sql}`, question.values));
  const scans: string[] = [];
  const walk = (node: Record<string, unknown>) => {
    if (String(node['Node Type']).includes('Scan') && tables.includes(String(node['Relation Name']))) {
      scans.push([node['Node Type'], node['Relation Name'], node['Index Name']].filter(Boolean).join(' '));
    }
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(explained.rows[0]['QUERY PLAN'][0].Plan);
  return scans;
}

/** Rows each table gave the question (sequential and index fetches), counted in its own transaction. */
async function rowsRead(question: Question): Promise<Record<string, number>> {
  return inReadTransaction(async (client) => {
    const counts = async () => {
      const r = await client.query<{ relname: string; read: string }>(
        `SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS read
           FROM pg_stat_xact_user_tables WHERE schemaname = current_schema() AND relname = ANY($1)`,
        [tables],
      );
      return new Map(r.rows.map((row) => [row.relname, Number(row.read)]));
    };
    const before = await counts();
    await client.query(question.sql, question.values);
    const after = await counts();
    return Object.fromEntries(tables.map((t) => [t, (after.get(t) ?? 0) - (before.get(t) ?? 0)]));
  });
}

async function expectIndexRanges(subject: Subject): Promise<void> {
  for (const [name, question] of Object.entries(questions(subject))) {
    const scans = question.plan === false ? [] : await planScans(question);
    if (question.plan !== false) expect(scans.length, name).toBeGreaterThan(0);
    // A bitmap heap scan reads what its bitmap index scan found: a range too.
    for (const scan of scans) {
      expect(scan, `${name}: ${scans.join(', ')}`).toMatch(/^(Index (Only )?Scan( Backward)?|Bitmap Heap Scan) /);
    }
    const read = await rowsRead(question);
    for (const table of tables) {
      expect(read[table], `${name}: rows of ${table} (${JSON.stringify(read)})`).toBeLessThanOrEqual(
        question.maxRows[table] ?? 0,
      );
    }
  }
}

/** The per-record tables and the small ones the questions start from. */
const analyzed = [...tables, 'namespaces', 'partitions'];
const analyze = async () => {
  for (const table of analyzed) await db.pool.query(`ANALYZE ${table}`);
};
let first: Subject;

beforeAll(async () => {
  await admin.connect();
  const schema = await schemas.fresh();
  api = `${schema}_api`;
  db = await Database.open(urlForSchema(schema), 'amends-test read api plans');
  for (const table of analyzed) await db.pool.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  await analyze();
  first = await ledger(testName(), 12_000);
});

afterAll(async () => {
  await db?.close();
  await schemas.dropAll();
  await admin.end();
});

describe("the read API's questions", () => {
  it('are index ranges of their key in a new database, whose tables were analyzed empty', async () => {
    await expectIndexRanges(first);
  });

  it('are index ranges of their key while the statistics know only another namespace', async () => {
    await fill('others');
    await analyze();
    await fill('mine');
    await expectIndexRanges(synthetic('mine'));
  });

  it("have no order for a revision as of a bound but decisions_applied_by_txn's, whatever the statistics", async () => {
    // Without the index, finding a transaction's revision as of the bound needs a sort: no other
    // index can walk the partition for it (the probe names no partition), so no estimate can
    // choose such a walk. (With the partition named, decisions_pkey offered one, and a database
    // analyzed while empty chose it: 20 million rows for a 20,000-record ledger.)
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('DROP INDEX decisions_applied_by_txn');
      // Sorts cost the planner all it can: a sort-free walk, were there one, would be its choice.
      await client.query('SET LOCAL enable_sort = off');
      const { sql, values } = questions(first)['explain: contributions as of'] as Question;
      const explained = await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, values);
      // Per scan of decisions: whether a Sort stands between it and the Limit that takes its first row.
      const sortedScans: boolean[] = [];
      const walk = (node: Record<string, unknown>, sortedSinceLimit: boolean) => {
        const type = node['Node Type'];
        const sorted = type === 'Limit' ? false : sortedSinceLimit || type === 'Sort';
        if (node['Relation Name'] === 'decisions') sortedScans.push(sorted);
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child, sorted);
      };
      walk(explained.rows[0]['QUERY PLAN'][0].Plan, false);
      expect(sortedScans.length).toBeGreaterThan(0);
      expect(sortedScans.every((s) => s)).toBe(true);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('are index ranges of their key once the tables are analyzed', async () => {
    await analyze();
    await expectIndexRanges(synthetic('mine'));
    await expectIndexRanges(first);
  });
});
