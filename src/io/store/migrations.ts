/**
 * Versioned schema migrations, applied automatically before a process first uses the
 * database (postgres.ts: Database.open).
 *
 * Scheme: `schema_migrations(version, name, applied_at)` records what ran. Each migration
 * is a TypeScript module under ./migrations exporting {version, name, sql}; add a new one
 * with the next version and append it to `migrations` below. Released migrations never change.
 *
 * Where: amends' own schema, the one the session's search_path names (database-schema.ts).
 * A database that an older build migrated has its ledger in `public`: the pending migrations
 * run there, and migration 10 moves everything into the session's schema.
 *
 * Concurrency: two processes starting at once must both succeed. Everything runs in one
 * transaction that first takes a transaction-level advisory lock (released by COMMIT or
 * ROLLBACK, even if the process dies), then re-reads the applied versions under the lock,
 * so exactly one process applies each version and the other sees it applied.
 *
 * Read-only commands (inspect, export, explain, balances, verify, wait, tui) and processes
 * started with `--no-migrate` never migrate: `requireCurrentSchema` only says what is missing
 * and which command creates it. `amendsctl migrate` is the explicit step (issue 35): run by the role
 * that owns the tables.
 */
import type pg from 'pg';
import { operationalError } from '../../kernel/amends-error.js';
import { assertInvariant } from '../../kernel/invariant.js';
import { namespacesMigration } from './migrations/0001-namespaces.js';
import { workerStoreMigration } from './migrations/0002-worker-store.js';
import { transportMigration } from './migrations/0003-transport.js';
import { outboxPendingInIdOrderMigration } from './migrations/0004-outbox-pending-in-id-order.js';
import { dayTotalsMigration } from './migrations/0005-day-totals.js';
import { namespaceIdsMigration } from './migrations/0006-namespace-ids.js';
import { outboxInOutputVersionsMigration } from './migrations/0007-outbox-in-output-versions.js';
import { configRevisionsMigration } from './migrations/0008-config-revisions.js';
import { partitionClaimsMigration } from './migrations/0009-partition-claims.js';
import { ownSchemaMigration } from './migrations/0010-own-schema.js';
import { readApiMigration } from './migrations/0011-read-api.js';
import type { Migration } from './migrations/migration.js';

export type { Migration } from './migrations/migration.js';

export const migrations: readonly Migration[] = [
  namespacesMigration,
  workerStoreMigration,
  transportMigration,
  outboxPendingInIdOrderMigration,
  dayTotalsMigration,
  namespaceIdsMigration,
  outboxInOutputVersionsMigration,
  configRevisionsMigration,
  partitionClaimsMigration,
  ownSchemaMigration,
  readApiMigration,
];

/**
 * The advisory lock key of the migration transaction: the int8 whose bytes are ASCII
 * "amends" (0x616d656e6473). It uses the single-int8 form, which pg_locks records with
 * objsubid 1, so it can never collide with the producer guard's two-int4 keys (objsubid 2).
 */
export const migrationLockKey = 0x616d656e6473n;

/** Waiting for another process's migrations, and running ours, may take longer than a normal statement. */
const migrationLockTimeoutMs = 30_000;
const migrationStatementTimeoutMs = 60_000;

migrations.forEach((m, i) => {
  assertInvariant(m.version === i + 1, `migration ${m.name} has version ${m.version}, expected ${i + 1}`);
  assertInvariant(/^[a-z0-9_]+$/.test(m.name), `migration name ${m.name} is not snake_case`);
});

/** The ledger of applied migrations, in the schema the session works in (`search_path`). */
const createLedger = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;

/**
 * The schema the session works in: its search_path, which amends sets to one plain name in
 * every session's startup packet (database-schema.ts). A client that set none is refused.
 */
async function sessionSchema(client: pg.ClientBase): Promise<string> {
  const row = await client.query<{ path: string }>(`SELECT current_setting('search_path') AS path`);
  const path = row.rows[0]?.path ?? '';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(path)) {
    throw operationalError(
      `the session's search_path is ${JSON.stringify(path)}, not one schema name: connect through amends' own settings (AMENDS_DATABASE_SCHEMA)`,
    );
  }
  return path;
}

/**
 * Where the ledger is: in the session's schema; in `public`, where every build before
 * migration 10 kept amends' tables (so migration 10 moves them); or nowhere yet. Another
 * tool's `public.schema_migrations` (Rails and golang-migrate name theirs so too) is not ours:
 * ours has a `name` column whose version 1 is `namespaces`, beside a `partitions` table.
 */
async function ledgerSchema(client: pg.ClientBase, schema: string): Promise<string | undefined> {
  const found = await client.query<{ own: string | null; candidate: boolean }>(
    `SELECT to_regclass(format('%I.schema_migrations', $1::text))::text AS own,
            to_regclass('public.schema_migrations') IS NOT NULL AND to_regclass('public.partitions') IS NOT NULL
              AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('public.schema_migrations')
                                                       AND attname = 'name' AND NOT attisdropped) AS candidate`,
    [schema],
  );
  const { own, candidate } = found.rows[0] ?? { own: null, candidate: false };
  const old =
    schema !== 'public' &&
    candidate &&
    (await client.query(`SELECT 1 FROM public.schema_migrations WHERE version = 1 AND name = 'namespaces'`))
      .rowCount === 1;
  if (own && old) {
    throw operationalError(
      `amends' tables are in both schema ${schema} and schema public: a build older than migration 10 (own_schema) has made or used public's since they were moved; stop it, keep the copy that holds your namespaces (docs/operations.md "Upgrading amends"), and drop the other`,
    );
  }
  if (own) return schema;
  return old ? 'public' : undefined;
}

async function appliedVersions(
  client: pg.ClientBase,
  ledger: string | undefined,
): Promise<Map<number, string> | undefined> {
  if (ledger === undefined) return undefined;
  const rows = await client.query<{ version: number; name: string }>(
    `SELECT version, name FROM ${ledger}.schema_migrations`,
  );
  return new Map(rows.rows.map((r) => [r.version, r.name]));
}

function pending(applied: Map<number, string> | undefined): Migration[] {
  if (applied) {
    const known = migrations.length;
    for (const [version, name] of applied) {
      if (version > known) {
        throw operationalError(
          `the database schema has migration ${version} (${name}), newer than this amends knows (up to ${known}): use a newer amends`,
        );
      }
      const ours = migrations[version - 1];
      if (ours && ours.name !== name) {
        throw operationalError(
          `schema migration ${version} in the database is ${JSON.stringify(name)}, this amends calls it ${JSON.stringify(ours.name)}: the database belongs to a different amends build`,
        );
      }
    }
  }
  return migrations.filter((m) => !applied?.has(m.version));
}

/**
 * Brings the schema up to date; returns the versions this call applied (often none).
 * `client` must not be inside a transaction.
 */
export async function applyMigrations(client: pg.ClientBase, options: { through?: number } = {}): Promise<number[]> {
  // `through` stops at an older version: only the upgrade test writes a database as an older build did.
  const wanted = (m: Migration) => m.version <= (options.through ?? migrations.length);
  const schema = await sessionSchema(client);
  // Fast path without the lock: an up-to-date schema is the common case.
  const ledger = await ledgerSchema(client, schema);
  if (pending(await appliedVersions(client, ledger)).filter(wanted).length === 0) return [];
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL lock_timeout = ${migrationLockTimeoutMs}`);
    await client.query(`SET LOCAL statement_timeout = ${migrationStatementTimeoutMs}`);
    await client.query('SELECT pg_advisory_xact_lock($1::int8)', [migrationLockKey.toString()]);
    const applied = await migrateUnderLock(client, schema, wanted);
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/**
 * Re-reads where the ledger is under the lock (another process may have migrated while we
 * waited), then runs what is pending where the tables are: in `public` until migration 10
 * moves them into the session's schema, which sets the search path for the rest.
 */
async function migrateUnderLock(client: pg.ClientBase, schema: string, wanted: (m: Migration) => boolean) {
  const ledger = await ledgerSchema(client, schema);
  await createSchema(client, schema);
  if (ledger === 'public' && schema !== 'public') await client.query('SET LOCAL search_path = public');
  else await client.query(createLedger);
  const todo = pending(await appliedVersions(client, ledger ?? schema)).filter(wanted);
  for (const m of todo) {
    const timeoutMs = m.statementTimeoutMs ?? migrationStatementTimeoutMs;
    await client.query(`SET LOCAL statement_timeout = ${timeoutMs}`);
    await client.query(typeof m.sql === 'string' ? m.sql : m.sql({ schema }));
    await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
  }
  return todo.map((m) => m.version);
}

/**
 * Creates the schema when it is missing. Only then: creating one needs CREATE on the
 * database, which a migrate role given a schema made for it by the DBA does not have.
 */
async function createSchema(client: pg.ClientBase, schema: string): Promise<void> {
  const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${schema}`);
}

/** What a command that does not migrate says when the schema is missing or old. */
const migrateAdvice =
  'run amendsctl migrate first (amends worker, relay, view and amendsctl source-load also migrate unless started with --no-migrate; inspect, export, explain, balances and tui never change the database)';

/**
 * For the read-only commands and processes started with --no-migrate: the schema must exist
 * and be exactly what this amends knows.
 * Nothing is created or migrated, not even the ledger table; a newer or diverged schema is
 * refused as `applyMigrations` refuses it. `database` names it in the diagnostic (host:port/name).
 */
/** The newest migration this amends knows: the schema version it needs. */
export function knownSchemaVersion(): number {
  return migrations.length;
}

export async function requireCurrentSchema(client: pg.ClientBase, database: string): Promise<void> {
  const applied = await appliedVersions(client, await ledgerSchema(client, await sessionSchema(client)));
  if (!applied) throw operationalError(`the database ${database} has no amends schema yet: ${migrateAdvice}`);
  const todo = pending(applied);
  if (todo.length > 0) {
    const missing = todo.map((m) => `${m.version} (${m.name})`).join(', ');
    throw operationalError(
      `the database ${database} lacks schema migration${todo.length > 1 ? 's' : ''} ${missing} of this amends (it has ${applied.size} of ${migrations.length}): ${migrateAdvice}`,
    );
  }
}
