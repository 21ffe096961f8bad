/**
 * Which failures of PostgreSQL (pg, libpq's SQLSTATEs) and of Node's sockets under it are an
 * outage worth riding out (docs/design.md#unknown-outcomes): the server cannot be reached, dropped the
 * connection, is starting up or shutting down, has no connection slot left, or is not the
 * primary yet (a failover). The store's
 * adapters wrap the client's errors with `storeError`, which sets `outage` from these tests.
 */
import { type AmendsError, operationalError } from '../../kernel/amends-error.js';
import { isOutageError } from '../../kernel/outage-errors.js';

/** Node's codes and pg's messages for a server that cannot be reached or dropped the connection. */
const unreachableCodes = /^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|ECONNRESET|EAI_AGAIN)$/;
const unreachableMessages = /timeout expired|Connection terminated|connect ECONN/i;

/**
 * libpq / PostgreSQL: connection exceptions, shutdown and start-up, too many connections; and
 * a read-only transaction (25006) where amends writes, which is a failover under way: a proxy
 * routed the session to a node that is not (or not yet) the primary (issue 33, the HA stack:
 * Patroni's /primary answers 200 a moment before the promoted node takes writes).
 */
const outageSqlStates = /^(08...|57P01|57P02|57P03|53300|25006)$/;
/** Beyond what describeDatabaseError calls unreachable: a write into a connection that closed. */
const outageNodeCodes = /^EPIPE$/;
const outageMessages = new RegExp(
  [
    'terminating connection',
    // pg's answer to a statement on a session whose connection already failed (a dedicated
    // session such as a role lock's, used after its server went away).
    'has encountered a connection error and is not queryable',
    'the database system is (starting up|shutting down|in recovery mode)',
    // The relay's and the view's role lock losing its session (io/transport/role-lock.ts).
    "lock's database session (failed|ended)",
    // describeDatabaseError's words for an unreachable server.
    'cannot reach the database',
  ].join('|'),
  'i',
);

/** True when a Node code and the first line of a message say the server cannot be reached. */
export function isUnreachable(code: string, message: string): boolean {
  return unreachableCodes.test(code) || unreachableMessages.test(message);
}

/** Whether this one error (not its causes) is a PostgreSQL or socket outage. */
export function isPgOutage(link: unknown): boolean {
  if (link === null || typeof link !== 'object') return false;
  const { code, message } = link as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (unreachableCodes.test(code) || outageSqlStates.test(code))) return true;
  if (typeof code === 'string' && outageNodeCodes.test(code)) return true;
  return typeof message === 'string' && (unreachableMessages.test(message) || outageMessages.test(message));
}

/** Whether `error` or anything in its cause chain is an outage the store knows of. */
export function isStoreOutage(error: unknown): boolean {
  return isOutageError(error, isPgOutage);
}

/**
 * The amends error for a failed database call: `message` says what failed and what to do, the
 * client's error stays as `cause`, and `outage` is this room's verdict on either.
 */
export function storeError(message: string, cause: unknown, nextStep?: string): AmendsError {
  const outage = isPgOutage({ message }) || isStoreOutage(cause);
  return operationalError(message, cause, nextStep === undefined ? { outage } : { outage, nextStep });
}
