/**
 * Kafka's murmur2 and default partitioner (src/domain/murmur2.ts) against Kafka's own answers.
 */
import { describe, expect, it } from 'vitest';
import { murmur2, murmur2Partition, toPositive } from '../../src/domain/murmur2.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('murmur2', () => {
  // apache/kafka, clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java,
  // testMurmur2 (commit f55581dc73953c3509a4702433aeeeddc2970779): `"…".getBytes()`, ASCII.
  it.each([
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ])("Kafka's UtilsTest vector %j", (text, expected) => {
    expect(murmur2(utf8(text))).toBe(expected);
  });

  // test/vectors/KafkaPartitionVectors.java: Kafka 4.1.1's Utils.murmur2 and
  // toPositive(h) % n (BuiltInPartitioner.partitionForKey) over the same UTF-8 bytes, covering
  // each tail length (0–3 bytes) and a multi-byte UTF-8 character.
  it.each([
    ['{"item":"widget","location":"berlin"}', -1266925484, 0, 3],
    ['{"item":"gadget","location":"paris"}', -307138598, 0, 5],
    ['{"item":"bolt ✓","location":"wien"}', -1740560495, 0, 0],
    ['{"item":"item-07","location":"loc-2"}', 685202992, 1, 5],
    ['', 275646681, 0, 2],
    ['a', -1563381124, 1, 5],
    ['ab', 316155434, 2, 0],
  ])("Kafka's partition of %j", (text, hash, of3, of7) => {
    expect(murmur2(utf8(text))).toBe(hash);
    expect(murmur2Partition(utf8(text), 3)).toBe(of3);
    expect(murmur2Partition(utf8(text), 7)).toBe(of7);
  });

  it('toPositive clears the sign bit, so -2^31 is 0 (not an overflowing abs)', () => {
    expect(toPositive(-(2 ** 31))).toBe(0);
    expect(toPositive(-1)).toBe(0x7fffffff);
    expect(toPositive(5)).toBe(5);
  });
});
