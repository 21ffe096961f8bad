/**
 * A Kafka record's key or value as amends holds it, from what the librdkafka binding delivers:
 * shared by the worker's source consumer and the verifier's bounded topic reader, so both see
 * the bytes the same way.
 */

/**
 * The record's bytes exactly as received: null stays null (a tombstone or a missing key), a
 * Buffer becomes a plain Uint8Array view of the same memory (no copy; the binding allocates a
 * fresh buffer per message, so nothing else shares it).
 */
export function bytesOf(data: Buffer | string | null | undefined): Uint8Array | null {
  if (data === null || data === undefined) return null;
  if (typeof data === 'string') return new TextEncoder().encode(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
