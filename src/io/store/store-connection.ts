/**
 * The store's own PostgreSQL session (postgres-state.ts): one dedicated connection, used
 * by one statement at a time, that can be abandoned at any moment without leaving work
 * running in the server.
 *
 * Why not the pool: a cancelled statement must not keep running (or keep waiting on a row
 * lock) after its caller gave up, so an abort sends `pg_cancel_backend` for this session's
 * backend and destroys the socket; the next statement opens a fresh session. A pool would
 * hand the broken connection to someone else, and its prepared statements live per
 * connection anyway.
 *
 * Every failure says how far the statement got, because only that tells whether an
 * implicit transaction can have committed (postgres-state.ts classifies):
 * - `not_sent`: the statement never reached the server (aborted before, or no connection);
 * - `rejected`: the server answered with an ERROR: the statement and its transaction were
 *   rolled back, and the session is still usable;
 * - `lost`: anything else after sending: the connection broke, a FATAL error, an abort or
 *   the client-side timeout while the statement was in flight. The server may have run and
 *   committed it.
 */
import pg from 'pg';
import { untilAborted } from '../../kernel/abortable.js';
import { type Queryable, sessionConfig, sessionLimits } from './postgres.js';

export type StatementFailureKind = 'not_sent' | 'rejected' | 'lost';

export class StatementFailure extends Error {
  readonly kind: StatementFailureKind;

  constructor(kind: StatementFailureKind, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'StatementFailure';
    this.kind = kind;
  }
}

/**
 * A client-side bound on one statement, above the server's statement_timeout so that the
 * server normally answers first; it only fires when the server or the network is gone.
 */
export const statementReplyTimeoutMs = sessionLimits.statementTimeoutMs + 2_000;

/**
 * How long a new session waits for an abandoned session's backend to end (pg_terminate_backend
 * with a timeout, PostgreSQL ≥ 14), below the pool's statement_timeout.
 */
export const abandonedBackendWaitMs = 3_000;

interface Session {
  client: pg.Client;
  /** The server process of this session, for pg_cancel_backend. */
  backendPid: number;
  broken: boolean;
}

export class StoreConnection {
  private session: Session | undefined;
  /** Statements run strictly one after another: an abort must never hit a neighbour's statement. */
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** The backend of the last abandoned session until it is known to have ended. */
  private abandonedBackend: number | undefined;

  /**
   * @param canceller runs `pg_cancel_backend` on another session (the process's pool).
   */
  constructor(
    private readonly url: string,
    private readonly applicationName: string,
    private readonly canceller: Queryable,
  ) {}

  /** Runs one statement on the session, as its own implicit transaction unless the text says otherwise. */
  run<R extends pg.QueryResultRow>(query: pg.QueryConfig, signal: AbortSignal): Promise<pg.QueryResult<R>> {
    let begun = false;
    const turn = this.queue.then(() => {
      begun = true;
      return this.runNow<R>(query, signal);
    });
    this.queue = turn.catch(() => {});
    if (signal.aborted) return turn;
    // A call cancelled while it waits for its turn answers at once; its turn then sends nothing.
    // Once its turn has begun, runNow alone answers an abort (it knows whether it sent).
    return new Promise<pg.QueryResult<R>>((resolve, reject) => {
      const onAbort = () => {
        if (!begun) reject(new StatementFailure('not_sent', 'cancelled before the statement was sent'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      turn.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** The server process id of the current session, when one is open (tests look it up). */
  get backendPid(): number | undefined {
    return this.session?.backendPid;
  }

  async close(): Promise<void> {
    this.closed = true;
    const session = this.session;
    this.session = undefined;
    if (session !== undefined) await session.client.end().catch(() => {});
  }

  private async runNow<R extends pg.QueryResultRow>(
    query: pg.QueryConfig,
    signal: AbortSignal,
  ): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new StatementFailure('not_sent', 'the store connection is closed');
    if (signal.aborted) throw new StatementFailure('not_sent', 'cancelled before the statement was sent');
    const session = await this.connected(signal);
    if (this.closed) {
      // close() ran while this session was being opened (after an abandoned one, that waits for
      // the old backend to end): it never saw the session, so it is ended here, or its open
      // socket would keep the process alive after its work is done.
      if (this.session === session) this.session = undefined;
      session.client.end().catch(() => {});
      throw new StatementFailure('not_sent', 'the store connection is closed');
    }
    if (signal.aborted) throw new StatementFailure('not_sent', 'cancelled before the statement was sent');
    const pending = session.client.query<R>(query);
    return new Promise<pg.QueryResult<R>>((resolve, reject) => {
      let settled = false;
      const finish = (action: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        action();
      };
      const abandon = (why: string) =>
        finish(() => {
          this.abandon(session);
          reject(new StatementFailure('lost', why));
        });
      const onAbort = () => abandon('cancelled while the statement was in flight');
      const timer = setTimeout(
        () => abandon(`no reply from the database within ${statementReplyTimeoutMs} ms`),
        statementReplyTimeoutMs,
      );
      signal.addEventListener('abort', onAbort, { once: true });
      pending.then(
        (result) => finish(() => resolve(result)),
        (error: unknown) =>
          finish(() => {
            // Only an ERROR-severity answer proves the server rolled the statement back and the
            // session lives on. FATAL (or a localized severity we cannot read) ends the session
            // and proves nothing about an implicit COMMIT: treat it as lost.
            if (error instanceof pg.DatabaseError && error.severity === 'ERROR' && !session.broken) {
              reject(new StatementFailure('rejected', describe(error), error));
            } else {
              this.abandon(session);
              reject(new StatementFailure('lost', `the connection failed: ${describe(error)}`, error));
            }
          }),
      );
    });
  }

  private async connected(signal: AbortSignal): Promise<Session> {
    if (this.session !== undefined && !this.session.broken) return this.session;
    this.session = undefined;
    await this.awaitAbandonedBackend(signal);
    const client = new pg.Client(sessionConfig(this.url, this.applicationName));
    const session: Session = { client, backendPid: 0, broken: false };
    // An idle session that dies emits 'error'; without a listener Node would crash the process.
    client.on('error', () => {
      session.broken = true;
    });
    client.on('end', () => {
      session.broken = true;
    });
    const onAbort = () => client.connection.stream.destroy();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await client.connect();
      const pid = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      session.backendPid = pid.rows[0]?.pid ?? 0;
    } catch (error) {
      client.connection.stream.destroy();
      const why = signal.aborted ? 'cancelled while connecting' : `cannot connect: ${describe(error)}`;
      throw new StatementFailure('not_sent', why, error);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    this.session = session;
    return session;
  }

  /**
   * Ends the abandoned session's backend and waits until it has gone, before a new session runs
   * any statement. Until then a statement sent on the abandoned session may still be running
   * (e.g. waiting on a row lock: the server does not notice a closed socket while it waits)
   * and commit later, so an observation made now would not be final: "frontier = expected, it
   * did not commit" could turn false after the retry was sent (docs/design.md#unknown-outcomes). The cancel sent
   * at abandonment is best-effort and can be lost like any request; this wait is not: while the
   * backend cannot be shown gone, no statement is sent (`not_sent`), and an observation after an
   * unknown outcome stays unresolved instead of wrong.
   */
  private async awaitAbandonedBackend(signal: AbortSignal): Promise<void> {
    const pid = this.abandonedBackend;
    if (pid === undefined) return;
    const wait = (async () => {
      // pg_terminate_backend(pid, timeout) waits for the exit (PostgreSQL ≥ 14); for a pid that
      // is already gone it only warns. The second statement (a fresh snapshot) is the proof.
      await this.canceller.query('SELECT pg_terminate_backend($1, $2)', [pid, abandonedBackendWaitMs]);
      const alive = await this.canceller.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
      return (alive.rowCount ?? 0) === 0;
    })();
    let ended: boolean;
    try {
      ended = await untilAborted(wait, signal, 'waiting for an abandoned session to end');
    } catch (error) {
      wait.catch(() => {});
      const why = signal.aborted ? 'cancelled' : describe(error);
      throw new StatementFailure(
        'not_sent',
        `the abandoned session's backend ${pid} is not known to have ended (${why})`,
        error,
      );
    }
    if (!ended) {
      throw new StatementFailure('not_sent', `the abandoned session's backend ${pid} is still running`);
    }
    if (this.abandonedBackend === pid) this.abandonedBackend = undefined;
  }

  /**
   * Gives the session up at once: the server is asked to cancel whatever it runs for it (a
   * statement waiting on a row lock would otherwise wait until lock_timeout, and could still
   * commit), and the socket is destroyed so the backend exits at its next read or write.
   */
  private abandon(session: Session): void {
    session.broken = true;
    if (this.session === session) this.session = undefined;
    if (session.backendPid > 0) {
      this.abandonedBackend = session.backendPid;
      this.canceller.query('SELECT pg_cancel_backend($1)', [session.backendPid]).catch(() => {});
    }
    session.client.connection.stream.destroy();
  }
}

function describe(error: unknown): string {
  const e = error as { message?: unknown; code?: unknown };
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : String(error);
  const code = typeof e.code === 'string' ? ` [${e.code}]` : '';
  return `${message.split('\n', 1)[0] ?? ''}${code}`;
}
