/**
 * One active process per namespace and role (docs/design.md#transport: one active relay; a second waits
 * as a hot standby). Mechanism: a PostgreSQL session advisory lock on a dedicated connection,
 * like the producer guard (producer-guard.ts): PostgreSQL releases it when that session
 * ends, so a killed holder never leaves it behind, and a standby takes over within one
 * retry interval.
 *
 * Key: the first 8 bytes of SHA-256("amends.<role>\0" + namespace) as two int4 values. The
 * producer guard hashes "amends.producer-guard\0" + incarnation (same two-int4 form, a
 * different prefix, so distinct but for a 64-bit collision); the migration lock is a single
 * int8 (objsubid 1) and never collides with either.
 *
 * The standby polls pg_try_advisory_lock instead of blocking in pg_advisory_lock: the
 * session's statement_timeout (postgres.ts) would cut a blocking wait, and a poll lets
 * SIGTERM end the wait at once.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { storeError } from '../store/pg-errors.js';
import { connectDedicated, describeDatabaseError } from '../store/postgres.js';

export type LockedRole = 'relay' | 'view';

/** How often a standby tries the lock: the failover delay after the holder's session ends. */
export const standbyRetryMs = 500;

export function roleLockKeys(role: LockedRole, namespace: string): [number, number] {
  const hash = createHash('sha256').update(`amends.${role}\0${namespace}`, 'utf8').digest();
  return [hash.readInt32BE(0), hash.readInt32BE(4)];
}

export class RoleLock {
  private lostReason: string | undefined;
  private closed = false;
  private held = false;
  private readonly keys: [number, number];

  private constructor(
    /** The dedicated session; the relay also LISTENs on it. */
    readonly client: pg.Client,
    private readonly url: string,
    readonly role: LockedRole,
    readonly namespace: string,
  ) {
    this.keys = roleLockKeys(role, namespace);
    const lose = (why: string) => {
      if (!this.closed) this.lostReason ??= why;
    };
    client.on('error', (error) => lose(`the ${role} lock's database session failed: ${error.message}`));
    client.on('end', () => lose(`the ${role} lock's database session ended`));
  }

  static async open(url: string, role: LockedRole, namespace: string, applicationName: string): Promise<RoleLock> {
    return new RoleLock(await connectDedicated(url, applicationName), url, role, namespace);
  }

  /**
   * Waits until this session holds the lock (true) or `signal` fires (false). `onWaiting`
   * is called once when the first attempt finds the lock taken, `onTried` after every
   * attempt the database answered (a standby's readiness: role-readiness.ts).
   */
  async acquire(signal: AbortSignal, onWaiting: () => void, onTried: () => void = () => {}): Promise<boolean> {
    let told = false;
    while (!signal.aborted) {
      this.throwIfLost();
      let ok: boolean | undefined;
      try {
        const result = await this.client.query<{ ok: boolean }>(
          'SELECT pg_try_advisory_lock($1::int4, $2::int4) AS ok',
          this.keys,
        );
        ok = result.rows[0]?.ok;
      } catch (error) {
        throw describeDatabaseError(error, this.url, `taking the ${this.role} lock of namespace ${this.namespace}`);
      }
      onTried();
      if (ok === true) {
        this.held = true;
        return true;
      }
      if (!told) {
        told = true;
        onWaiting();
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, standbyRetryMs);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
    }
    return false;
  }

  /** Throws once the session that holds (or waits for) the lock is gone: stop writing. */
  throwIfLost(): void {
    if (this.lostReason !== undefined) {
      // The lost session is the database's outage: storeError says so (pg-errors.ts).
      throw storeError(`${this.lostReason}; another ${this.role} may be active now, so this one stops`, undefined);
    }
  }

  get isHeld(): boolean {
    return this.held && this.lostReason === undefined;
  }

  /** Ends the session: PostgreSQL releases the lock with it. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.held = false;
    await this.client.end().catch(() => {});
  }
}
