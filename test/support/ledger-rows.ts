/**
 * Every row a namespace has in the per-record tables, as text, in a fixed order: what a
 * schema upgrade must not change (store-upgrade.test.ts, postgres-schema.test.ts). Read the
 * same way before migration 0006 (the tables hold `namespace text`) and after it (they hold
 * `ns`, the namespace's id): after, each row is found through its id and shows the
 * namespace's text in place of it, so a row compares equal exactly when its content is
 * unchanged and its id is the one of its namespace.
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
    const { rows } = await client.query(
      byId.rows.length > 0
        ? `SELECT to_jsonb(t) - 'ns' - 'decided_at' - 'created_at' || jsonb_build_object('namespace', n.namespace) AS r
             FROM ${table} t JOIN namespaces n ON n.id = t.ns WHERE n.namespace = $1 ORDER BY ${order}`
        : `SELECT to_jsonb(t) - 'decided_at' - 'created_at' AS r FROM ${table} t WHERE t.namespace = $1 ORDER BY ${order}`,
      [namespace],
    );
    out.push(...rows.map((r) => `${table} ${JSON.stringify(r.r)}`));
  }
  return out;
}
