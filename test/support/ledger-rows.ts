/**
 * Every row a namespace has in the per-record tables, as text, in a fixed order: what a
 * schema upgrade must not change (store-upgrade.test.ts, postgres-schema.test.ts). Read the
 * same way before migration 0006 (the tables hold `namespace text`) and after it (they hold
 * `ns`, the namespace's id): after, each row is found through its id and shows the
 * namespace's text in place of it, so a row compares equal exactly when its content is
 * unchanged and its id is the one of its namespace. Migration 0007 moved each envelope into
 * its version's row and a published flag in place of the time: a version row is compared
 * without the envelope's columns (the outbox rows show them), an envelope by whether it is
 * published.
 */
import type pg from 'pg';

/** The per-record tables, each with its order after the namespace (its key). */
export const perRecordTables = {
  decisions: ['partition', 'record_offset'],
  authority: ['item', 'location', 'txn'],
  output_versions: ['item', 'location', 'day', 'version'],
  output_days: ['item', 'location', 'day'],
  outbox: ['id'],
  view_rows: ['item', 'location', 'day'],
} as const;

export type PerRecordTable = keyof typeof perRecordTables;

/** Columns a table gained or changed in an upgrade, left out of its rows (a `jsonb - text[]`). */
const unlike: Partial<Record<PerRecordTable, string>> = {
  output_versions: "'{id,record_key,record_value}'::text[]",
  outbox: "'{published_at,published}'::text[]",
};
/** The envelope's published state, from `published_at` (before 0007) or `published` (since). */
const published: Partial<Record<PerRecordTable, string>> = {
  outbox: ` || jsonb_build_object('published', coalesce(to_jsonb(t)->'published', to_jsonb(to_jsonb(t)->'published_at' <> 'null'::jsonb)))`,
};

export async function ledgerRows(
  client: Pick<pg.ClientBase, 'query'>,
  namespace: string,
  tables: readonly PerRecordTable[],
): Promise<string[]> {
  const byId = await client.query(
    `SELECT 1 FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'decisions' AND column_name = 'ns'`,
  );
  const out: string[] = [];
  for (const table of tables) {
    const order = perRecordTables[table].map((c) => `t.${c}`).join(', ');
    const row = `(to_jsonb(t) - 'decided_at' - 'created_at' - ${unlike[table] ?? "'{}'::text[]"}${published[table] ?? ''})`;
    const { rows } = await client.query(
      byId.rows.length > 0
        ? `SELECT ${row} - 'ns' || jsonb_build_object('namespace', n.namespace) AS r
             FROM ${table} t JOIN namespaces n ON n.id = t.ns WHERE n.namespace = $1 ORDER BY ${order}`
        : `SELECT ${row} AS r FROM ${table} t WHERE t.namespace = $1 ORDER BY ${order}`,
      [namespace],
    );
    out.push(...rows.map((r) => `${table} ${JSON.stringify(r.r)}`));
  }
  return out;
}
