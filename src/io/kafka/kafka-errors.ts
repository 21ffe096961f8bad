/**
 * Which failures of the Kafka clients (librdkafka through @confluentinc/kafka-javascript, and
 * kafkajs for DescribeConfigs) are an outage worth riding out (docs/design.md#unknown-outcomes): no broker
 * answered, a partition is between leaders, a coordinator is moving. Neither client marks
 * its errors retriable in a way amends can rely on across both, so their texts are matched
 * here, once; the Kafka adapters wrap the clients' errors with `kafkaError`, which sets
 * `outage` from this test.
 */
import { type AmendsError, operationalError } from '../../kernel/amends-error.js';
import { isOutageError } from '../../kernel/outage-errors.js';

const outageMessages = new RegExp(
  [
    // librdkafka and the admin client: no broker answered in time.
    'Broker transport failure',
    'All broker connections are down',
    'Local: Timed out',
    'Local: Broker handle destroyed',
    'Broker: Request timed out',
    // broker-reach.ts's words for what librdkafka's log showed: every bootstrap address refused
    // (a broker restarting refuses too) or a name that did not resolve (DNS may come back).
    'connection refused at|cannot resolve the broker address',
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

/** kafkajs reaches the brokers over Node's sockets: a refused, reset or unresolved connection. */
const socketCodes = /^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|ECONNRESET|EAI_AGAIN|EPIPE)$/;
const socketMessages = /connect ECONN/i;

/** Whether this one error (not its causes) is a Kafka outage. */
export function isKafkaOutage(link: unknown): boolean {
  if (link === null || typeof link !== 'object') return false;
  const { code, message } = link as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && socketCodes.test(code)) return true;
  return typeof message === 'string' && (outageMessages.test(message) || socketMessages.test(message));
}

/** Whether `error` or anything in its cause chain is an outage the Kafka room knows of. */
export function isBrokerOutage(error: unknown): boolean {
  return isOutageError(error, isKafkaOutage);
}

/**
 * The amends error for a failed Kafka call: `message` says what failed and what to check, the
 * client's error (if any) stays as `cause`, and `outage` is this room's verdict on either.
 */
export function kafkaError(message: string, cause?: unknown): AmendsError {
  return operationalError(message, cause, { outage: isKafkaOutage({ message }) || isBrokerOutage(cause) });
}
