/**
 * Each question of the SQL read API is an index range of the key it asks about, not a scan of
 * the namespace (issue 36 item 4): explain's versions and contributions as of a bound, a page of
 * balances for one key's days and a page of the whole namespace, and positions_at's binary search.
 * As in verify-read-plans.test.ts, another namespace's rows are analyzed and the asked
 * namespace's written after (autovacuum off, so the statistics do not know it), and each question
 * is asked before and after an ANALYZE.
 *
 * Two views of each: the plan (no sequential scan, every scan an index's range), and
 * the rows the question made PostgreSQL read (pg_stat_xact_user_tables, counted inside the
 * question's transaction, independent of the plan's shape): bounded by the key's share, or for
 * positions_at by the logarithm of the partition, never the namespace's.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balancePageSql } from '../../src/io/store/balance-pages.js';
import { Database } from '../../src/io/store/postgres.js';
import { fillUnbounded, registerBoundNamespace } from '../support/bound-namespace-rows.js';
import { testDatabaseUrl } from '../support/endpoints.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';

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

/** The questions, each about key i3 (a tenth of the namespace) or one page, with what each may read. */
function questions(): Record<string, Question> {
  // An offset halfway through partition 0 (transaction 5,000's first revision, on day 100), and a
  // day just after it: some of its transactions were decided after the bound.
  const middle = txns;
  const day = '2026-04-15';
  return {
    'explain: versions as of': {
      sql: `SELECT * FROM ${api}.versions_as_of($1, 'i3', 'berlin', $2, $3::bigint[])`,
      values: ['mine', day, [String(middle)]],
      maxRows: { output_versions: 3, decisions: 3 },
    },
    'explain: contributions as of': {
      sql: `SELECT * FROM ${api}.contributions_as_of($1, 'i3', 'berlin', $2, $3::bigint[])`,
      values: ['mine', day, [String(middle)]],
      // Each transaction of the key once, and one step of its revision as of the bound.
      maxRows: { authority: txnsPerKey, decisions: txnsPerKey },
    },
    'balances: one key, a range of days': {
      sql: balancePageSql(api),
      values: ['mine', [String(middle)], 'i3', 'berlin', '2026-02-01', '2026-03-01', '', '', '', 5_000],
      maxRows: { output_days: 29, output_versions: 3 * 29 },
    },
    // As of now (each partition's frontier − 1, as the command fixes it): every day is active.
    'balances: a page of the namespace': {
      sql: balancePageSql(api),
      values: ['mine', [String(2 * txns - 1)], null, null, null, null, 'i3', 'berlin', '2026-03-01', 500],
      maxRows: { output_days: 500, output_versions: 500 },
    },
    'as of a time: positions_at': {
      sql: `SELECT ${api}.positions_at($1, timestamptz '2026-01-01 00:00:00Z' + $2::int * interval '1 second')`,
      values: ['mine', middle],
      // One decision per halving of the partition's 20,000 offsets.
      maxRows: { decisions: Math.ceil(Math.log2(2 * txns)) + 1 },
      plan: false,
    },
  };
}

/** Every scan of a plan: its node type, relation and index. */
async function planScans(question: Question): Promise<string[]> {
  const explained = await db.pool.query(`EXPLAIN (FORMAT JSON) ${question.sql}`, question.values);
  const scans: string[] = [];
  const walk = (node: Record<string, unknown>) => {
    if (String(node['Node Type']).includes('Scan') && node['Relation Name'] !== undefined) {
      scans.push([node['Node Type'], node['Relation Name'], node['Index Name']].filter(Boolean).join(' '));
    }
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(explained.rows[0]['QUERY PLAN'][0].Plan);
  return scans;
}

/** Rows each table gave the question (sequential and index fetches), counted in its own transaction. */
async function rowsRead(question: Question): Promise<Record<string, number>> {
  const client = await db.pool.connect();
  const counts = async () => {
    const r = await client.query<{ relname: string; read: string }>(
      `SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS read
         FROM pg_stat_xact_user_tables WHERE schemaname = current_schema() AND relname = ANY($1)`,
      [tables],
    );
    return new Map(r.rows.map((row) => [row.relname, Number(row.read)]));
  };
  try {
    await client.query('BEGIN READ ONLY');
    const before = await counts();
    await client.query(question.sql, question.values);
    const after = await counts();
    await client.query('COMMIT');
    return Object.fromEntries(tables.map((t) => [t, (after.get(t) ?? 0) - (before.get(t) ?? 0)]));
  } finally {
    client.release();
  }
}

async function expectIndexRanges(): Promise<void> {
  for (const [name, question] of Object.entries(questions())) {
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

beforeAll(async () => {
  await admin.connect();
  const schema = await schemas.fresh();
  api = `${schema}_api`;
  db = await Database.open(urlForSchema(schema), 'amends-test read api plans');
  for (const table of tables) await db.pool.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  await fill('others');
  for (const table of tables) await db.pool.query(`ANALYZE ${table}`);
  await fill('mine');
});

afterAll(async () => {
  await db?.close();
  await schemas.dropAll();
  await admin.end();
});

describe("the read API's questions", () => {
  it('are index ranges of their key while the statistics do not know the namespace yet', async () => {
    await expectIndexRanges();
  });

  it('are index ranges of their key once the tables are analyzed', async () => {
    for (const table of tables) await db.pool.query(`ANALYZE ${table}`);
    await expectIndexRanges();
  });
});
