import type { Migration } from './migration.js';

/**
 * amends' tables in a schema of their own (issue 35): every build before this one kept them in
 * `public`, beside whatever else the database holds. This migration moves each of amends' own
 * objects — by name, never "everything in public" — into the session's schema (default
 * `amends`, database-schema.ts), rows, indexes, constraints, owned sequences and privileges
 * with them (ALTER … SET SCHEMA changes the namespace only: nothing is copied). The migration
 * runner runs the migrations before this one in `public` when it finds the ledger there, so a
 * database of any older schema version is brought up to date where it is, then moved.
 *
 * In a database set up by this build, or one whose sessions always named a schema of their own
 * (`options=-c search_path=…`), the tables are already where they belong and nothing moves.
 */
const tables = [
  'namespaces',
  'partitions',
  'decisions',
  'authority',
  'output_versions',
  'output_days',
  'worker_heartbeats',
  'output_bindings',
  'view_partitions',
  'view_rows',
  'relay_partitions',
  'config_revisions',
  'schema_migrations',
];
const views = ['quarantine', 'outbox'];

function moveSql(schema: string): string {
  const moves = [
    ...tables.map((t) => `ALTER TABLE public.${t} SET SCHEMA ${schema};`),
    ...views.map((v) => `ALTER VIEW public.${v} SET SCHEMA ${schema};`),
    `ALTER FUNCTION public.amends_assert(boolean, text) SET SCHEMA ${schema};`,
  ];
  return `
    DO $move$
    BEGIN
      IF current_schema() = 'public' AND '${schema}' <> 'public' THEN
        ${moves.join('\n        ')}
      END IF;
    END
    $move$;
    SET LOCAL search_path = ${schema};
  `;
}

export const ownSchemaMigration: Migration = {
  version: 10,
  name: 'own_schema',
  sql: ({ schema }) => moveSql(schema),
};
