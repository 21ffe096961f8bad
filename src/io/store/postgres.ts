/**
 * PostgreSQL connections for amends: the URL from AMENDS_DATABASE_URL, the session limits
 * every connection starts with, one-line diagnostics for a missing or unreachable database,
 * and the pool that applies the schema migrations before its first use.
 */
import pg from 'pg';
import { AmendsError, operationalError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { isLocalStackAddress, localStackPorts } from '../process/local-stack.js';
import { databaseSchema, urlWithSchemaSetting, withSchemaPath, withSessionOption } from './database-schema.js';
import { checkTlsParameters, tlsAdvice } from './database-tls.js';
import { applyMigrations, requireCurrentSchema } from './migrations.js';
import { isUnreachable, storeError } from './pg-errors.js';
import { withPooledClient } from './pooled-client.js';

/**
 * Session limits (docs/design.md#store): a frozen process may not hold a row lock or an open
 * transaction past the 20 s callback/poll budget, and no statement runs unbounded.
 * They go in the startup packet, so they hold from the first statement of every session.
 */
export const sessionLimits = {
  statementTimeoutMs: 5_000,
  lockTimeoutMs: 5_000,
  idleInTransactionSessionTimeoutMs: 10_000,
} as const;
const connectTimeoutMs = 5_000;
const poolSizeMax = 4;

const missingUrlAdvice =
  "set it to the database of this namespace, e.g. export AMENDS_DATABASE_URL='postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=verify-full&sslrootcert=/path/to/ca.pem' (the local stack's, npm run up: postgres://amends:amends-local-only@127.0.0.1:15432/amends?sslmode=disable)";

/**
 * The database URL of a command that needs one (docs/design.md#commands); one actionable line
 * when missing. AMENDS_DATABASE_SCHEMA, when set, goes into its options (database-schema.ts).
 */
export function databaseUrlFrom(env: NodeJS.ProcessEnv): string {
  const url = env.AMENDS_DATABASE_URL?.trim();
  if (!url) throw operationalError(`AMENDS_DATABASE_URL is not set: ${missingUrlAdvice}`);
  // pg resolves anything else relative to a dummy host and then fails to resolve "base".
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw operationalError(`AMENDS_DATABASE_URL is not a postgres:// URL: ${missingUrlAdvice}`);
  }
  const hosts = severalHosts(url);
  if (hosts !== undefined) {
    throw operationalError(
      `AMENDS_DATABASE_URL names several hosts (${hosts}), a libpq multi-host URL, which node-postgres does not support: give the one address that always reaches the primary (HAProxy or PgBouncer in front of Patroni, or your provider's primary endpoint; docs/operations.md "Running on Patroni and HAProxy")`,
    );
  }
  const withSchema = urlWithSchemaSetting(url, env.AMENDS_DATABASE_SCHEMA);
  databaseSchema(withSchema); // a search_path of its own in the URL must name one schema
  return withSchema;
}

/** The host list of a libpq multi-host URL (`postgres://u@h1:5432,h2:5432/db`), else undefined. */
function severalHosts(url: string): string | undefined {
  const authority = url.replace(/^postgres(ql)?:\/\//, '').split(/[/?#]/, 1)[0] ?? '';
  const hostPart = authority.slice(authority.lastIndexOf('@') + 1);
  return hostPart.includes(',') ? hostPart : undefined;
}

/** host:port/database of a URL, never its credentials: what diagnostics may show. */
export function databaseTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return '(unparseable AMENDS_DATABASE_URL)';
  }
}

/** What to do when the database does not answer: start the local stack only for its own address. */
function reachAdvice(url: string): string {
  let local = false;
  try {
    const u = new URL(url);
    local = isLocalStackAddress(u.hostname, Number(u.port || '5432'), localStackPorts.postgres);
  } catch {
    // an unparseable URL is reported where it is parsed
  }
  return local
    ? 'start it (npm run up) or fix AMENDS_DATABASE_URL'
    : 'check the host and port of AMENDS_DATABASE_URL, and that this host can reach them';
}

/**
 * The pg configuration of every amends session. `application_name` names the process
 * (command and pid) so pg_stat_activity shows who holds what. Query parameters of the URL
 * still apply: pg merges them over these settings. Every session works in amends' own schema
 * (database-schema.ts): its search_path goes into the URL's options.
 */
export function sessionConfig(url: string, applicationName: string): pg.ClientConfig {
  checkTlsParameters(url);
  return {
    connectionString: withLibpqSslModes(withSchemaPath(url)),
    application_name: applicationName,
    statement_timeout: sessionLimits.statementTimeoutMs,
    lock_timeout: sessionLimits.lockTimeoutMs,
    idle_in_transaction_session_timeout: sessionLimits.idleInTransactionSessionTimeoutMs,
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
  };
}

/** The sslmode values whose meaning differs between pg 8 and libpq. */
const libpqDivergentSslModes = new Set(['prefer', 'require', 'verify-ca']);

/**
 * The URL with `uselibpqcompat=true` when its sslmode is prefer, require or verify-ca and it
 * does not choose itself. pg-connection-string 2.x treats those modes as verify-full and
 * prints a nine-line SECURITY WARNING on the first connection (its index.js,
 * deprecatedSslModeWarning); with the flag they mean what libpq, psql and the PostgreSQL
 * docs say (`require`: encrypted, certificate not checked; with sslrootcert: checked
 * against that CA), which is what a user who wrote them expects. verify-full and disable
 * are the same either way, and are left alone.
 */
export function withLibpqSslModes(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const mode = parsed.searchParams.get('sslmode');
  if (mode === null || !libpqDivergentSslModes.has(mode) || parsed.searchParams.has('uselibpqcompat')) return url;
  parsed.searchParams.set('uselibpqcompat', 'true');
  return parsed.toString();
}

/** One line that says what failed and what to do; the URL's credentials never appear. */
export function describeDatabaseError(error: unknown, url: string, doing: string): AmendsError {
  if (error instanceof AmendsError) return error;
  const target = databaseTarget(url);
  const e = error as { code?: unknown; message?: unknown; errors?: unknown };
  // Node reports a refused dual-stack connect as an AggregateError with an empty message.
  let message = typeof e.message === 'string' ? e.message : String(error);
  if (!message && Array.isArray(e.errors) && e.errors.length > 0) message = errorMessage(e.errors[0]);
  if (!message && typeof e.code === 'string') message = e.code;
  message = message.split('\n', 1)[0] ?? '';
  const code = typeof e.code === 'string' ? e.code : '';
  if (isUnreachable(code, message)) {
    const why = code === 'ECONNREFUSED' ? ': connection refused' : ` (${message})`;
    return storeError(`cannot reach the database at ${target}${why}: ${reachAdvice(url)}`, error);
  }
  const tls = tlsAdvice(code, url);
  if (tls !== undefined) return storeError(`database ${target}: ${doing} failed: ${message}: ${tls}`, error);
  if (error instanceof TypeError && /Invalid URL/i.test(message)) {
    return storeError('AMENDS_DATABASE_URL is not a valid postgres:// URL', error);
  }
  const sqlState = /^[0-9A-Z]{5}$/.test(code) ? ` [SQLSTATE ${code}]` : '';
  return storeError(`database ${target}: ${doing} failed: ${message}${sqlState}`, error);
}

/**
 * The URL with `-c default_transaction_read_only=on` added to its `options`, in the startup
 * packet: it holds from the first statement, and a URL's own options (a search_path) stay,
 * where a separate `options` setting would be overridden by the URL's. An unparseable URL is
 * returned as it is, for pg to report.
 */
function readOnlySessionUrl(url: string): string {
  return withSessionOption(url, '-c default_transaction_read_only=on');
}

/** Something that runs queries: a pool, a pooled client or a dedicated client. */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.ClientBase, 'query'>;

export class Database {
  private constructor(
    readonly pool: pg.Pool,
    readonly url: string,
  ) {}

  /**
   * Connects, checks the database answers, and applies pending migrations (migrations.ts)
   * before anything else touches the schema.
   */
  static open(url: string, applicationName: string): Promise<Database> {
    return Database.connect(url, applicationName, applyMigrations, 'applying the schema migrations');
  }

  /** `amendsctl migrate`: applies what is pending, closes, and says which versions it applied. */
  static async migrate(url: string, applicationName: string): Promise<number[]> {
    let applied: number[] = [];
    const prepare = async (client: pg.PoolClient) => {
      applied = await applyMigrations(client);
    };
    const db = await Database.connect(url, applicationName, prepare, 'applying the schema migrations');
    await db.close();
    return applied;
  }

  /**
   * For a process started with `--no-migrate`: the schema must already be current (one line
   * naming `amendsctl migrate` otherwise), and the sessions may write.
   */
  static openCurrent(url: string, applicationName: string): Promise<Database> {
    const current = (client: pg.PoolClient) => requireCurrentSchema(client, databaseTarget(url));
    return Database.connect(url, applicationName, current, 'checking the schema');
  }

  /**
   * For the read-only commands (inspect, export, tui): the schema must already be current,
   * nothing is migrated (migrations.ts: requireCurrentSchema), and every session is read-only,
   * so a write that slipped into their queries fails instead of changing the database.
   */
  static openReadOnly(url: string, applicationName: string): Promise<Database> {
    const current = (client: pg.PoolClient) => requireCurrentSchema(client, databaseTarget(url));
    return Database.connect(url, applicationName, current, 'checking the schema', readOnlySessionUrl(url));
  }

  private static async connect(
    url: string,
    applicationName: string,
    prepare: (client: pg.PoolClient) => Promise<unknown>,
    preparing: string,
    sessionUrl = url,
  ): Promise<Database> {
    let pool: pg.Pool;
    try {
      pool = new pg.Pool({ ...sessionConfig(sessionUrl, applicationName), max: poolSizeMax });
    } catch (error) {
      throw describeDatabaseError(error, url, 'configuring the connection');
    }
    // An idle pooled connection that dies emits 'error' on the pool; without a listener Node
    // would crash the process. The next query reports the failure instead.
    pool.on('error', () => {});
    try {
      await withPooledClient(
        pool,
        async (client) => {
          try {
            await prepare(client);
          } catch (error) {
            throw describeDatabaseError(error, url, preparing);
          }
        },
        (error) => describeDatabaseError(error, url, 'connecting'),
      );
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return new Database(pool, url);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => {});
  }
}

/**
 * A dedicated connection outside any pool, for session state that must live exactly as
 * long as the connection (the producer guard's advisory lock).
 */
export async function connectDedicated(url: string, applicationName: string): Promise<pg.Client> {
  let client: pg.Client;
  try {
    client = new pg.Client(sessionConfig(url, applicationName));
  } catch (error) {
    throw describeDatabaseError(error, url, 'configuring the connection');
  }
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw describeDatabaseError(error, url, 'connecting');
  }
  return client;
}
