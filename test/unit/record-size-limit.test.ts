/**
 * The record size limit source-load checks before publishing (record-size-limit.ts): the
 * tighter of the topic's max.message.bytes and the producer's message.max.bytes, each less
 * its worst-case framing, exact at the boundary.
 */
import { describe, expect, it } from 'vitest';
import {
  producerMessageMaxBytes,
  recordBatchHeaderBytes,
  recordFramingMaxBytes,
  recordSizeLimit,
  refuseOversizedRecords,
} from '../../src/io/kafka/record-size-limit.js';

const record = (line: number, keyBytes: number, valueBytes: number) => ({
  line,
  key: new Uint8Array(keyBytes),
  value: new Uint8Array(valueBytes),
});

describe('record size limit', () => {
  it("takes the topic's limit when it is the tighter one, and keeps batches within it", () => {
    const limit = recordSizeLimit('t', 600);
    expect(limit.payloadMaxBytes).toBe(600 - recordBatchHeaderBytes - recordFramingMaxBytes);
    expect(limit.batchSizeBytes).toBe(600);
    expect(limit.setBy).toContain("topic t's max.message.bytes 600");
  });

  it("takes the producer's limit above it (the broker default 1048588 is looser)", () => {
    const limit = recordSizeLimit('t', 1_048_588);
    expect(limit.payloadMaxBytes).toBe(producerMessageMaxBytes - recordFramingMaxBytes);
    expect(limit.batchSizeBytes).toBe(producerMessageMaxBytes);
    expect(limit.setBy).toContain("the producer's message.max.bytes");
  });

  it('admits a record of exactly the limit and names the first line one byte over it', () => {
    const limit = recordSizeLimit('t', 600);
    const max = limit.payloadMaxBytes;
    expect(() => refuseOversizedRecords([record(1, 10, max - 10)], limit)).not.toThrow();
    expect(() =>
      refuseOversizedRecords([record(1, 10, max - 10), record(2, 11, max - 10), record(3, 900, 0)], limit),
    ).toThrow(`line 2: the encoded record is ${max + 1} bytes (key 11, value ${max - 10}), more than the ${max} bytes`);
  });
});
