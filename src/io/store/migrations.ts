/**
 * Versioned schema migrations, applied automatically before a process first uses the
 * database (postgres.ts: Database.open).
 *
 * Scheme: `schema_migrations(version, name, applied_at)` records what ran. Each migration
 * is a TypeScript module under ./migrations exporting {version, name, sql}; add a new one
 * with the next version and append it to `migrations` below. Released migrations never change.
 *
 * Concurrency: two processes starting at once must both succeed. Everything runs in one
 * transaction that first takes a transaction-level advisory lock (released by COMMIT or
 * ROLLBACK, even if the process dies), then re-reads the applied versions under the lock,
 * so exactly one process applies each version and the other sees it applied.
 *
 * Read-only commands (inspect, export, tui) and processes started with `--no-migrate` never
 * migrate: `requireCurrentSchema` only says what is missing and which command creates it.
 * `amendsctl migrate` is the explicit step (issue 35): run by the role that owns the tables.
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

const createLedger = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;

async function appliedVersions(client: pg.ClientBase): Promise<Map<number, string> | undefined> {
  const exists = await client.query<{ found: string | null }>(`SELECT to_regclass('schema_migrations')::text AS found`);
  if (!exists.rows[0]?.found) return undefined;
  const rows = await client.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations');
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
  // Fast path without the lock: an up-to-date schema is the common case.
  if (pending(await appliedVersions(client)).filter(wanted).length === 0) return [];
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL lock_timeout = ${migrationLockTimeoutMs}`);
    await client.query(`SET LOCAL statement_timeout = ${migrationStatementTimeoutMs}`);
    await client.query('SELECT pg_advisory_xact_lock($1::int8)', [migrationLockKey.toString()]);
    await client.query(createLedger);
    // Re-check under the lock: another process may have applied them while we waited.
    const todo = pending(await appliedVersions(client)).filter(wanted);
    for (const m of todo) {
      const timeoutMs = m.statementTimeoutMs ?? migrationStatementTimeoutMs;
      await client.query(`SET LOCAL statement_timeout = ${timeoutMs}`);
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    }
    await client.query('COMMIT');
    return todo.map((m) => m.version);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** What a command that does not migrate says when the schema is missing or old. */
const migrateAdvice =
  'run amendsctl migrate first (amends worker, relay, view and amendsctl source-load also migrate unless started with --no-migrate; inspect, export and tui never change the database)';

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
  const applied = await appliedVersions(client);
  if (!applied) throw operationalError(`the database ${database} has no amends schema yet: ${migrateAdvice}`);
  const todo = pending(applied);
  if (todo.length > 0) {
    const missing = todo.map((m) => `${m.version} (${m.name})`).join(', ');
    throw operationalError(
      `the database ${database} lacks schema migration${todo.length > 1 ? 's' : ''} ${missing} of this amends (it has ${applied.size} of ${migrations.length}): ${migrateAdvice}`,
    );
  }
}
