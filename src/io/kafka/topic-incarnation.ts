/**
 * A topic's incarnation (README glossary): `kafka:` + the broker's 16-byte topic UUID in
 * lowercase hex. It tells a topic apart from a later topic with the same name.
 */
import { assertInvariant } from '../../kernel/invariant.js';

/**
 * The shape @confluentinc/kafka-javascript 1.10.1 returns from describeTopics at runtime.
 * The halves are *signed* 64-bit bigints (docs/design.md#kafka-admin; the typings also name a
 * `base64str` member that is undefined at runtime, the real one is `base64`).
 */
export interface KafkaTopicId {
  mostSignificantBits: bigint;
  leastSignificantBits: bigint;
}

const incarnationPattern = /^kafka:[0-9a-f]{32}$/;

/** Builds the big-endian 16 bytes from the two signed halves, then hex. */
export function incarnationFromTopicId(id: KafkaTopicId): string {
  const bytes = Buffer.alloc(16);
  // writeBigInt64BE takes the signed value and writes its two's complement: the UUID's bytes.
  bytes.writeBigInt64BE(BigInt.asIntN(64, id.mostSignificantBits), 0);
  bytes.writeBigInt64BE(BigInt.asIntN(64, id.leastSignificantBits), 8);
  const incarnation = `kafka:${bytes.toString('hex')}`;
  assertInvariant(incarnationPattern.test(incarnation), `incarnation ${incarnation} is not kafka:+32 hex`);
  return incarnation;
}

/** The all-zero UUID is Kafka's "no topic id" (an unknown topic, or a broker without topic ids). */
export function isZeroTopicId(id: KafkaTopicId): boolean {
  return id.mostSignificantBits === 0n && id.leastSignificantBits === 0n;
}
