/**
 * Kafka's default partitioner for keyed records (docs/design.md#configuration, partitioner
 * "murmur2"): `toPositive(murmur2(keyBytes)) % partitions`, as the Java client computes it
 * (`org.apache.kafka.common.utils.Utils.murmur2` and `toPositive`, used by its
 * `BuiltInPartitioner.partitionForKey`). Pure; the worker's engine and the verifier's oracles
 * share it, because it is a fixed published function, not an interpretation of the spec.
 *
 * Java computes in signed 32-bit ints that wrap; here `Math.imul` and `| 0` give the same bits,
 * and `>>>` is Java's unsigned shift. Test vectors: test/unit/murmur2.test.ts.
 */

const seed = 0x9747b28c;
const m = 0x5bd1e995;
const r = 24;

/** Kafka's murmur2 of `data`: a signed 32-bit integer, exactly as Java's `Utils.murmur2` returns it. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (seed ^ length) | 0;
  const blocks = length >>> 2;
  for (let i = 0; i < blocks; i++) {
    const at = i * 4;
    // Little-endian 4-byte blocks; Java masks each byte with 0xff, which a Uint8Array already is.
    let k =
      (data[at] as number) |
      ((data[at + 1] as number) << 8) |
      ((data[at + 2] as number) << 16) |
      ((data[at + 3] as number) << 24);
    k = Math.imul(k, m);
    k ^= k >>> r;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  // The tail of 1–3 bytes: Java's switch falls through from case 3 to case 1, as these do.
  const tail = blocks * 4;
  const rest = length & 3;
  if (rest === 3) h ^= (data[tail + 2] as number) << 16;
  if (rest >= 2) h ^= (data[tail + 1] as number) << 8;
  if (rest >= 1) {
    h ^= data[tail] as number;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's `Utils.toPositive`: clears the sign bit (not `Math.abs`, which overflows on -2^31). */
export function toPositive(h: number): number {
  return h & 0x7fffffff;
}

/** The partition Kafka's default partitioner gives a record with key bytes `key`. */
export function murmur2Partition(key: Uint8Array, partitions: number): number {
  return toPositive(murmur2(key)) % partitions;
}
