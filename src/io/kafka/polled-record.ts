/** A polled librdkafka message as the worker's source record: coordinates checked, bytes raw. */
import type { RdKafka } from '@confluentinc/kafka-javascript';
import { assertInvariant } from '../../kernel/invariant.js';
import type { SourceRecord } from '../../machines/ports.js';
import { bytesOf } from './record-bytes.js';

export function polledRecord(message: RdKafka.Message, topic: string): SourceRecord {
  assertInvariant(message.topic === topic, `polled a record of ${message.topic}`);
  // int64 offsets arrive as JS numbers: beyond 2^53 they would be silently rounded.
  assertInvariant(Number.isSafeInteger(message.offset) && message.offset >= 0, `polled offset ${message.offset}`);
  return {
    partition: message.partition,
    offset: message.offset,
    key: bytesOf(message.key),
    value: bytesOf(message.value),
  };
}
