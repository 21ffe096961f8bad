/**
 * Which failures are a dependency outage (docs/design.md#outages): the database or
 * the broker did not answer, or a session died under us. Those are ridden through within the
 * outage budget; anything else (a refused statement, a topic that changed, an inconsistent
 * store) still ends the process at once.
 */

/** Node's codes and pg's messages for a server that cannot be reached or dropped the connection. */
export const unreachableCodes = /^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|ECONNRESET|EAI_AGAIN)$/;
export const unreachableMessages = /timeout expired|Connection terminated|connect ECONN/i;

/** libpq / PostgreSQL: connection exceptions, shutdown and start-up, too many connections. */
const outageSqlStates = /^(08...|57P01|57P02|57P03|53300)$/;
/** Beyond what describeDatabaseError calls unreachable: a write into a connection that closed. */
const outageNodeCodes = /^EPIPE$/;
const outageMessages = new RegExp(
  [
    'terminating connection',
    'the database system is (starting up|shutting down|in recovery mode)',
    "lock's database session (failed|ended)",
    'cannot reach the database',
    // librdkafka and the admin client: no broker answered in time.
    'Broker transport failure',
    'All broker connections are down',
    'Local: Timed out',
    'Local: Broker handle destroyed',
    'Broker: Request timed out',
    // A partition between leaders (a broker died or restarts): ListOffsets answers -1001 with
    // no error (kafka-admin.ts `listedOffset`), or UNKNOWN_LEADER_EPOCH (75) / FENCED_LEADER_EPOCH (74).
    'leader not available|not leader|no leader answered|leader epoch',
    // OFFSET_NOT_AVAILABLE (78) just after a leader election: the new leader's high watermark
    // has not caught up yet (seen in a chaos run, from the view's ListOffsets).
    'high watermark is not caught up',
    // kafkajs's words for the same (its admin reads topic configurations): LEADER_NOT_AVAILABLE,
    // NOT_LEADER_OR_FOLLOWER and NETWORK_EXCEPTION while a broker dies or a leader is elected.
    'no leader for this topic-partition|not the leader for that topic-partition',
    'server disconnected before a response was received',
    'replica not available|not enough in-sync replicas',
    // ListOffsets with the partition's leader unknown (two of three brokers down, seen in a
    // chaos run): librdkafka's admin fails the request with ERR__NOENT, -156.
    'offsets? of topic .*Local: No such entry',
    'coordinator load in progress|coordinator not available|not coordinator',
  ].join('|'),
  'i',
);

/** True when `error` or any error in its `cause` chain is an outage. */
export function isOutageError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string' && [outageSqlStates, unreachableCodes, outageNodeCodes].some((r) => r.test(code))) {
      return true;
    }
    if (typeof message === 'string' && (unreachableMessages.test(message) || outageMessages.test(message))) return true;
    e = cause;
  }
  return false;
}
