/**
 * The producer session guard (docs/design.md#verification): at most one writer of a source at a time,
 * and no writer while `verify` compares. It is keyed by the source incarnation, not the
 * namespace, so every namespace over one source (rebuilds included) shares it.
 *
 * Mechanism: a PostgreSQL session-level advisory lock held on a dedicated connection.
 * PostgreSQL releases it when that session ends, so a crashed holder cannot leave it
 * behind. It guards processes that use the same database (advisory locks are per database).
 *
 * Lock key: the first 8 bytes of SHA-256("amends.producer-guard\0" + incarnation), read as
 * two big-endian signed int4 values (key1, key2) for pg_advisory_lock(int4, int4). The
 * two-int4 form shows in pg_locks as classid = key1::oid, objid = key2::oid, objsubid = 2,
 * which is how the holder is found; it never collides with the migration lock's single
 * int8 key (objsubid 1). Two incarnations share a key only on a 64-bit hash collision.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { operationalError } from '../../kernel/amends-error.js';
import { assertInvariant } from '../../kernel/invariant.js';
import { connectDedicated, describeDatabaseError, sessionLimits } from './postgres.js';

export interface GuardHolder {
  /** PostgreSQL backend pid of the holding session (not the holder's OS pid). */
  backendPid: number;
  /** Names the holding command and its OS pid, e.g. "amendsctl source-load pid 4321". */
  applicationName: string;
  backendStart: Date;
  clientAddr: string | null;
}

export type GuardAttempt = { acquired: true } | { acquired: false; holder: GuardHolder | undefined };

export function producerGuardKeys(incarnation: string): [number, number] {
  const hash = createHash('sha256').update(`amends.producer-guard\0${incarnation}`, 'utf8').digest();
  return [hash.readInt32BE(0), hash.readInt32BE(4)];
}

/** "…" held by `amendsctl source-load pid 4321` (database backend pid 88, connected since …). */
export function describeHolder(holder: GuardHolder | undefined): string {
  if (!holder) return 'another session (it released or was not visible when looked up)';
  const name = holder.applicationName || '(no application_name)';
  const from = holder.clientAddr ? ` from ${holder.clientAddr}` : '';
  return `"${name}" (database backend pid ${holder.backendPid}${from}, connected since ${holder.backendStart.toISOString()})`;
}

/** PostgreSQL's SQLSTATE for a lock wait cut short by lock_timeout. */
const lockNotAvailable = '55P03';

export class ProducerGuard {
  private held = false;
  private lostReason: string | undefined;
  private closed = false;
  private readonly keys: [number, number];

  private constructor(
    private readonly client: pg.Client,
    private readonly url: string,
    readonly incarnation: string,
  ) {
    this.keys = producerGuardKeys(incarnation);
    // If the session ends while we hold the lock, PostgreSQL has released it: remember that,
    // so the holder can stop writing and say so instead of writing unguarded.
    const lose = (why: string) => {
      if (this.closed) return;
      this.lostReason ??= why;
    };
    client.on('error', (error) => lose(`the guard's database session failed: ${error.message}`));
    client.on('end', () => lose("the guard's database session ended"));
  }

  /** Opens the dedicated connection; takes nothing yet. */
  static async open(url: string, incarnation: string, applicationName: string): Promise<ProducerGuard> {
    return new ProducerGuard(await connectDedicated(url, applicationName), url, incarnation);
  }

  /** Takes the guard if it is free; never waits (source-load). */
  async tryAcquire(): Promise<GuardAttempt> {
    assertInvariant(!this.held, 'tryAcquire while already holding the producer guard');
    const result = await this.run('taking the producer guard', () =>
      this.client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::int4, $2::int4) AS ok', this.keys),
    );
    if (result.rows[0]?.ok === true) {
      this.held = true;
      return { acquired: true };
    }
    return { acquired: false, holder: await this.holder() };
  }

  /**
   * Waits at most `waitMs` for the guard (verify). A blocking pg_advisory_lock queues behind
   * the holder, and later try-lock callers cannot jump that queue, so an active load
   * finishes first and no new one starts while we wait.
   */
  async acquire(waitMs: number): Promise<GuardAttempt> {
    assertInvariant(!this.held, 'acquire while already holding the producer guard');
    assertInvariant(Number.isSafeInteger(waitMs) && waitMs >= 0, `waitMs ${waitMs} is not a non-negative integer`);
    try {
      await this.run('preparing to wait for the producer guard', () =>
        this.client.query("SELECT set_config('lock_timeout', $1, false), set_config('statement_timeout', $2, false)", [
          String(Math.max(waitMs, 1)),
          String(waitMs + sessionLimits.statementTimeoutMs),
        ]),
      );
      try {
        await this.client.query('SELECT pg_advisory_lock($1::int4, $2::int4)', this.keys);
        this.held = true;
        return { acquired: true };
      } catch (error) {
        if ((error as { code?: unknown }).code === lockNotAvailable) {
          return { acquired: false, holder: await this.holder() };
        }
        throw describeDatabaseError(error, this.url, 'waiting for the producer guard');
      }
    } finally {
      // Back to the session's startup limits (RESET restores the startup-packet values).
      await this.client.query('RESET lock_timeout; RESET statement_timeout').catch(() => {});
    }
  }

  /** Throws when the guard is not (or no longer) held: call before each publication. */
  assertHeld(): void {
    if (this.lostReason !== undefined) {
      throw operationalError(`the producer guard was lost: ${this.lostReason}; nothing more is published`);
    }
    assertInvariant(this.held, 'publishing without holding the producer guard');
  }

  get lost(): string | undefined {
    return this.lostReason;
  }

  /** Releases the lock (when held) and closes the dedicated connection. Idempotent. */
  async release(): Promise<void> {
    if (this.closed) return;
    try {
      if (this.held && this.lostReason === undefined) {
        await this.client.query('SELECT pg_advisory_unlock($1::int4, $2::int4)', this.keys);
      }
    } finally {
      this.held = false;
      this.closed = true;
      // Closing the session releases any session lock as well, even if the unlock failed.
      await this.client.end().catch(() => {});
    }
  }

  /** The session currently holding the guard's lock, if one is visible. */
  async holder(): Promise<GuardHolder | undefined> {
    const result = await this.run('looking up the producer guard holder', () =>
      this.client.query<{
        pid: number;
        application_name: string;
        backend_start: Date;
        client_addr: string | null;
      }>(
        `SELECT a.pid, a.application_name, a.backend_start, host(a.client_addr) AS client_addr
           FROM pg_locks l
           JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.granted
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND l.classid = $1::int4::oid AND l.objid = $2::int4::oid AND l.objsubid = 2
          LIMIT 1`,
        this.keys,
      ),
    );
    const row = result.rows[0];
    if (!row) return undefined;
    return {
      backendPid: row.pid,
      applicationName: row.application_name,
      backendStart: row.backend_start,
      clientAddr: row.client_addr,
    };
  }

  private async run<T>(doing: string, query: () => Promise<T>): Promise<T> {
    try {
      return await query();
    } catch (error) {
      throw describeDatabaseError(error, this.url, doing);
    }
  }
}
