/**
 * What a failed poll of the source consumer means, in one line a user can act on. Two codes
 * get their own words: a position outside the retained range, and librdkafka's fatal error,
 * which for a consumer only ever means that the group fenced it as a static member
 * (librdkafka #2635): the client is dead for good, and only a new one can join again.
 */
import { RdKafka } from '@confluentinc/kafka-javascript';
import { operationalError } from '../../kernel/amends-error.js';
import { describeKafkaError, kafkaErrorCode } from './kafka-connection.js';

const errAutoOffsetReset = RdKafka.CODES.ERRORS.ERR__AUTO_OFFSET_RESET; // -140
const errFatal = RdKafka.CODES.ERRORS.ERR__FATAL; // -150

/** librdkafka's fatal error: for a consumer, a fence as a static member. */
export function isFatal(error: unknown): boolean {
  return kafkaErrorCode(error) === errFatal;
}

export function sourcePollFailure(error: unknown, instanceId: string | undefined): { error: Error; fenced: boolean } {
  const code = kafkaErrorCode(error);
  if (isFatal(error)) {
    const detail = `the group fenced this consumer as static member ${instanceId ?? '(none)'}: another process joined the group with --instance-id ${instanceId ?? '(none)'}, or the coordinator replayed an earlier join of this one after a failover (${describeKafkaError(error)})`;
    return { error: operationalError(detail, error), fenced: true };
  }
  if (code === errAutoOffsetReset) {
    const detail = `a source partition has no valid position (auto.offset.reset=error): ${describeKafkaError(error)}; its assigned offset lies outside the retained range`;
    return { error: operationalError(detail, error), fenced: false };
  }
  return {
    error: operationalError(`polling the source topic failed: ${describeKafkaError(error)}`, error),
    fenced: false,
  };
}
