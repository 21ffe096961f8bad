/**
 * What a call of librdkafka's `rebalance_cb` asks of the source consumer (docs/design.md#consumer,
 * docs/design.md#library-facts): an assignment of source partitions or a revocation, which librdkafka then
 * waits for the application to answer with `assign()` / `unassign()`. Reading the callback's
 * arguments is here; the answer and its bookkeeping are the consumer's (kafka-source-consumer.ts).
 */
import { RdKafka } from '@confluentinc/kafka-javascript';
import { assertInvariant } from '../../kernel/invariant.js';
import { describeKafkaError, kafkaErrorCode } from './kafka-connection.js';
import { consumerShim } from './rdkafka-consumer-shim.js';

const errAssignPartitions = RdKafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS; // -175
const errRevokePartitions = RdKafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS; // -174

/** The rebalance librdkafka is waiting for us to answer. */
export type PendingRebalance = { kind: 'assign'; partitions: readonly number[] } | { kind: 'revoke'; lost: boolean };

/**
 * The request of one rebalance callback, and the rebalance error to report when its code is
 * neither an assignment nor a revocation. Throws an invariant violation when librdkafka hands
 * over something other than partitions of `topic`.
 */
export function rebalanceRequest(
  consumer: RdKafka.KafkaConsumer,
  error: RdKafka.LibrdKafkaError,
  assignment: unknown,
  topic: string,
): { request: PendingRebalance; rebalanceError: string | null } {
  const code = kafkaErrorCode(error);
  if (code === errAssignPartitions) {
    return { request: { kind: 'assign', partitions: partitionsOf(assignment, topic) }, rebalanceError: null };
  }
  if (code === errRevokePartitions) {
    return { request: { kind: 'revoke', lost: consumerShim(consumer).assignmentLost() }, rebalanceError: null };
  }
  // Any other code means the assignment cannot be kept (librdkafka: answer with unassign):
  // report it as a loss so the group releases everything and unassigns.
  return { request: { kind: 'revoke', lost: true }, rebalanceError: describeKafkaError(error) };
}

/** The assigned partitions of the source topic, ascending. */
function partitionsOf(assignment: unknown, topic: string): number[] {
  assertInvariant(Array.isArray(assignment), 'the rebalance callback got no partition list');
  const partitions = (assignment as { topic: string; partition: number }[]).map((tp) => {
    assertInvariant(tp.topic === topic, `assigned ${tp.topic}[${tp.partition}], not the source topic`);
    return tp.partition;
  });
  return partitions.sort((a, b) => a - b);
}
