/**
 * Checking a client out of a pg pool for several statements (a transaction), safely.
 *
 * pg-pool listens for a pooled client's 'error' only while the client is idle: on checkout it
 * removes that listener. A connection that dies mid-transaction (a terminated backend, a
 * restarted server) first fails the statement in flight, then emits 'error' ("Connection
 * terminated unexpectedly") when the socket ends, and an 'error' nobody listens for ends the
 * Node process with a stack trace (issue 17: the view died so). Here the error is kept while
 * the client is out: the statement's own rejection reports the failure, and the dead client
 * is discarded on release instead of going back into the pool.
 */
import type pg from 'pg';

export async function withPooledClient<T>(
  pool: pg.Pool,
  use: (client: pg.PoolClient) => Promise<T>,
  /** What a failed checkout (no session at all) is reported as; by default the pool's error. */
  onConnectFailure: (error: unknown) => unknown = (error) => error,
): Promise<T> {
  const client = await pool.connect().catch((error: unknown) => {
    throw onConnectFailure(error);
  });
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken ??= error;
  };
  client.on('error', onError);
  try {
    return await use(client);
  } finally {
    client.off('error', onError);
    // An Error discards the connection; `undefined` returns it to the pool.
    client.release(broken);
  }
}
