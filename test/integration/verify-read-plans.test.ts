/**
 * The verifier's and export's page reads are index ranges whatever the planner knows (issue 34, item 4).
 * Right after a drain, a namespace's rows are newer than the tables' statistics: the planner
 * estimated one row for the namespace, and the `outbox` view's join then sorted everything after
 * the keyset for every page — a 200,000-record verify spent 47 s in its store phase instead of
 * 4. Here another namespace's rows are analyzed, the verified namespace's are written after
 * (autovacuum off, so the statistics stay stale), and each page statement is explained before
 * and after an ANALYZE: every step into a table must be a range of its key, with no sort.
 */

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/io/store/postgres.js';
import { viewRowsPageSql } from '../../src/io/transport/view-queries.js';
import {
  decisionsPageSql,
  keyOrderReadsSql,
  outputVersionsPageSql,
  quarantinePageSql,
  versionsWithEnvelopesPageSql,
} from '../../src/verify/export-queries.js';
import { decisionPageSql } from '../../src/verify/store-decision-pages.js';
import { fillUnbounded, registerBoundNamespace } from '../support/bound-namespace-rows.js';
import { testDatabaseUrl } from '../support/endpoints.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';

const admin = new pg.Client({ connectionString: testDatabaseUrl });
const schemas = new TestSchemas(admin, 'amends_test_plans');
let db: Database;
let mine: number;

/** Rows per namespace and table: enough pages that a sort of the rest would be the planner's choice. */
const rowsPerNamespace = 20_000;
const tables = ['decisions', 'output_versions', 'view_rows'];

/** One namespace's rows: a decision per offset (every 50th quarantined), a version and a view row per day. */
async function fill(namespace: string): Promise<number> {
  const ns = await registerBoundNamespace(db.pool, namespace, '2000-01-01');
  const day = "to_char(date '2000-01-01' + i, 'YYYY-MM-DD')";
  const perDay = (table: string) =>
    table === 'view_rows'
      ? [', record_value, topic_partition, topic_offset, applied_at', `, '\\x00', i % 2, i, now()`]
      : [', record_key, record_value', `, '\\x00', convert_to(repeat('v', 250), 'UTF8')`];
  await fillUnbounded(db.pool, [
    [
      `INSERT INTO decisions (ns, partition, record_offset, outcome, item, location, txn, rev, raw_key, raw_value,
                              quarantined, detail, epoch)
       SELECT $1, i % 2, i, CASE WHEN i % 50 = 0 THEN 'UNKNOWN_KEY' ELSE 'APPLIED' END, 'widget', 'berlin', 'T' || i, 1,
              '\\x00', convert_to(repeat('v', 200), 'UTF8'), i % 50 = 0,
              CASE WHEN i % 50 = 0 THEN 'not a configured key' END, 1
         FROM generate_series(1, $2::int) AS i`,
      [ns, rowsPerNamespace],
    ],
    ...['output_versions', 'view_rows'].map((table): [string, unknown[]] => {
      const [columns, values] = perDay(table);
      return [
        `INSERT INTO ${table} (ns, item, location, day, version, closing, status, retracted, cause_partition,
                               cause_offset${columns})
         SELECT $1, 'widget', 'berlin', ${day}, 1, 100, 'OK', false, i % 2, i${values}
           FROM generate_series(1, $2::int) AS i`,
        [ns, rowsPerNamespace],
      ];
    }),
  ]);
  return ns;
}

/** Each page statement with the key of a row in the middle of the namespace. */
function pageReads(ns: number): [string, string, unknown[]][] {
  const half = rowsPerNamespace / 2;
  const midDay = new Date(Date.UTC(2000, 0, 1 + half)).toISOString().slice(0, 10);
  return [
    ['verify: a partition of decisions', decisionPageSql, [ns, 0, half, 1_000]],
    ['export: decisions', decisionsPageSql, [ns, 5_000, 0, half]],
    ['export: quarantine', quarantinePageSql, [ns, 5_000, 0, half]],
    ['export: output versions', outputVersionsPageSql, [ns, 2_000, 'widget', 'berlin', midDay, 1]],
    ['verify: versions with envelopes', versionsWithEnvelopesPageSql, [ns, 2_000, 'widget', 'berlin', midDay, 1]],
    ['verify: view rows', viewRowsPageSql, [ns, 2_000, false, 'widget', 'berlin', midDay]],
  ];
}

/** Every step of a plan: its node type, and the relation and index it reads. */
async function planSteps(sql: string, values: unknown[]): Promise<string[]> {
  const client = await db.pool.connect();
  let explained: pg.QueryResult<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>;
  try {
    // As the verifier's snapshot reads (verify-run.ts; export sets the same for its session).
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(keyOrderReadsSql);
    explained = await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, values);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  const steps: string[] = [];
  const walk = (node: Record<string, unknown>) => {
    steps.push([node['Node Type'], node['Relation Name'], node['Index Name']].filter(Boolean).join(' '));
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(explained.rows[0]!['QUERY PLAN'][0]!.Plan);
  return steps;
}

/** A page read that is a range of `index` stopping at the limit: nothing else in its plan. */
function indexRange(table: string, index: string): string[] {
  return ['Limit', `Index Scan ${table} ${index}`];
}

const expectedPlans: Record<string, string[]> = {
  'verify: a partition of decisions': indexRange('decisions', 'decisions_pkey'),
  'export: decisions': indexRange('decisions', 'decisions_pkey'),
  'export: quarantine': indexRange('decisions', 'decisions_quarantined'),
  'export: output versions': indexRange('output_versions', 'output_versions_pkey'),
  'verify: versions with envelopes': indexRange('output_versions', 'output_versions_pkey'),
  'verify: view rows': indexRange('view_rows', 'view_rows_pkey'),
};

beforeAll(async () => {
  await admin.connect();
  const schema = await schemas.fresh();
  db = await Database.open(urlForSchema(schema), 'amends-test verify plans');
  for (const table of tables) await db.pool.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  await fill('others');
  for (const table of tables) await db.pool.query(`ANALYZE ${table}`);
  mine = await fill('mine');
});

afterAll(async () => {
  await db?.close();
  await schemas.dropAll();
  await admin.end();
});

describe("the verifier's page reads", () => {
  it('are index ranges of their key while the statistics do not know the namespace yet', async () => {
    for (const [name, sql, values] of pageReads(mine)) {
      expect([name, await planSteps(sql, values)]).toEqual([name, expectedPlans[name]]);
    }
  });

  it('are index ranges of their key once the tables are analyzed', async () => {
    for (const table of tables) await db.pool.query(`ANALYZE ${table}`);
    for (const [name, sql, values] of pageReads(mine)) {
      expect([name, await planSteps(sql, values)]).toEqual([name, expectedPlans[name]]);
    }
  });
});
