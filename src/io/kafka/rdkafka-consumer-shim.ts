/**
 * The members of @confluentinc/kafka-javascript 1.10.1's `KafkaConsumer` that exist at
 * runtime (lib/kafka-consumer.js) but are missing from its typings (types/rdkafka.d.ts;
 * docs/design.md#library-facts): typed once here, and checked to be there, instead of a cast at each use.
 */
import type { RdKafka } from '@confluentinc/kafka-javascript';
import { assertInvariant } from '../../kernel/invariant.js';

export interface ConsumerShim {
  /** Inside a revoke: whether the assignment was lost (session timed out) rather than given up. */
  assignmentLost(): boolean;
  /** consume(n)'s timeout bounds the wait for the first record only. */
  setDefaultIsTimeoutOnlyForFirstMessage(first: boolean): void;
}

/** The consumer itself, typed with the members its typings lack; fails when an upgrade lost one. */
export function consumerShim(consumer: RdKafka.KafkaConsumer): ConsumerShim {
  const members = consumer as unknown as Partial<ConsumerShim>;
  assertInvariant(
    typeof members.assignmentLost === 'function' &&
      typeof members.setDefaultIsTimeoutOnlyForFirstMessage === 'function',
    'KafkaConsumer lacks assignmentLost / setDefaultIsTimeoutOnlyForFirstMessage: recheck docs/design.md#kafka-consumer after an upgrade',
  );
  return members as ConsumerShim;
}

/**
 * consume(n) waits its timeout for the first record only, then takes what is already
 * fetched: otherwise a trickle of records could hold one poll for n × the timeout.
 */
export function waitForFirstRecordOnly(consumer: RdKafka.KafkaConsumer): void {
  consumerShim(consumer).setDefaultIsTimeoutOnlyForFirstMessage(true);
}
