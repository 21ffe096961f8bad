import type { Migration } from './migration.js';

/** The tables whose rows the migration keys by the id instead of the text. */
const perRecordTables = ['decisions', 'authority', 'output_versions', 'output_days', 'outbox', 'view_rows'];

/** One table's rewrite: the text becomes the id, every index and constraint rebuilt on it. */
const toId = (table: string) =>
  `ALTER TABLE ${table} ALTER COLUMN namespace TYPE integer USING amends_namespace_id(namespace);
    ALTER TABLE ${table} RENAME COLUMN namespace TO ns;`;

/**
 * Each namespace gets a small integer id, and the per-record tables key their rows by it
 * instead of by the namespace's text: indexes no wider than needed. The text (up to 63
 * bytes, 36 in a benchmark's `bench-scale-20261203t153027-1mvg-abc`) led every row and every
 * index entry of those tables, the same in all of them, and was the widest column of most
 * keys: a decision's primary key entry took 64 bytes with it and takes 24 with the id.
 * Measured with that namespace, 100,000 rows in each of the six tables, every index freshly
 * built before and after: their indexes 64.6 → 37.6 MB (decisions_pkey 7.8 → 3.2, authority
 * 8.7 → 4.9, output_versions and outbox_one_per_version 9.6 → 5.9, output_days, its shown
 * index and view_rows 8.7 → 5.0), their heaps 120.6 → 101.9 MB; converting those 600,000
 * rows took 3.3 s.
 *
 * - namespaces: gains `id`, an identity numbered in place for the existing rows. Ids are
 *   never reused; a registration that finds its row already there still draws one (ON
 *   CONFLICT), so they have gaps, which nothing minds.
 * - decisions, authority, output_versions, output_days, outbox, view_rows: `namespace text`
 *   becomes `ns integer`, the namespace's id. Each table is converted in place by one rewrite
 *   (ALTER COLUMN … TYPE … USING), which keeps every row and rebuilds every index and
 *   constraint of the table on the integer: the primary keys, outbox_one_per_version, and the
 *   partial indexes decisions_quarantined, output_days_shown and outbox_pending with their
 *   predicates, outbox_pending still ordered by `id + 0` (migration 0004 says why). Item,
 *   location, txn and day keep COLLATE "C".
 * - No foreign key on `ns`, for the reason of migration 0002 (a per-row RI check cost a third
 *   of the batch statement): output_days loses the one it had to namespaces, and view_rows
 *   the one to output_bindings. Their writers hold a row that has one: the batch statement
 *   the namespace's locked partition row, the view its locked view_partitions rows.
 * - Kept on the text: namespaces itself, partitions, worker_heartbeats, output_bindings and
 *   view_partitions. They hold a row per namespace, partition or process, so their width
 *   does not matter; they keep their foreign keys, and a process finds its rows by the
 *   manifest's namespace before it knows the id.
 * - quarantine: the same columns as before, the namespace's text joined from namespaces.
 */
export const namespaceIdsMigration: Migration = {
  version: 6,
  name: 'namespace_ids',
  // Rewriting a large ledger's tables may take longer than a normal statement.
  statementTimeoutMs: 3_600_000,
  sql: `
    ALTER TABLE namespaces ADD COLUMN id integer GENERATED ALWAYS AS IDENTITY UNIQUE NOT NULL;

    -- The conversion's lookup: a row of a namespace that is not registered breaks an invariant
    -- (nothing deletes a namespace), and the whole migration rolls back.
    CREATE FUNCTION amends_namespace_id(name text) RETURNS integer
      LANGUAGE plpgsql STABLE AS $$
      DECLARE
        found integer;
      BEGIN
        SELECT id INTO found FROM namespaces WHERE namespace = name;
        PERFORM amends_assert(found IS NOT NULL, 'a row of namespace ' || name || ', which is not registered');
        RETURN found;
      END
    $$;

    DROP VIEW quarantine;
    ALTER TABLE output_days DROP CONSTRAINT output_days_namespace_fkey;
    ALTER TABLE view_rows DROP CONSTRAINT view_rows_namespace_fkey;

    ${perRecordTables.map(toId).join('\n    ')}

    DROP FUNCTION amends_namespace_id(text);

    -- transport.md, Export: quarantine = decision fields, raw bytes, detail.
    CREATE VIEW quarantine AS
      SELECT n.namespace, d.partition, d.record_offset, d.outcome, d.item, d.location, d.txn, d.rev,
             d.raw_key, d.raw_value, d.detail
        FROM decisions d JOIN namespaces n ON n.id = d.ns
       WHERE d.quarantined;
  `,
};
