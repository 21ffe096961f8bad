/**
 * What the State's callers promise it, asserted where the machines' requests cross into the
 * store: a bug report when broken, never a user error.
 */
import { assertInvariant } from '../../kernel/invariant.js';
import type { ProcessRequest } from '../../machines/ports.js';

/** At most this many records per `process` call: the batch is one statement's arrays. */
export const batchRecordsMax = 10_000;

export function assertPartitionOf(partitions: number, partition: number): void {
  assertInvariant(
    Number.isSafeInteger(partition) && partition >= 0 && partition < partitions,
    `partition ${partition} is not in [0, ${partitions})`,
  );
}

/**
 * The batch as docs/design.md#partition-lifecycle promises it: one partition, offsets ascending
 * from the frontier.
 */
export function assertProcessRequest(partitions: number, request: ProcessRequest): void {
  const { partition, records, epoch, expectedFrontier } = request;
  assertPartitionOf(partitions, partition);
  assertInvariant(Number.isSafeInteger(epoch) && epoch >= 1, `epoch ${epoch}`);
  assertInvariant(Number.isSafeInteger(expectedFrontier) && expectedFrontier >= 0, `frontier ${expectedFrontier}`);
  assertInvariant(
    records.length >= 1 && records.length <= batchRecordsMax,
    `a batch of ${records.length} records (1 to ${batchRecordsMax})`,
  );
  let previous = expectedFrontier - 1;
  for (const r of records) {
    assertInvariant(r.partition === partition, `a record of partition ${r.partition} in a batch of ${partition}`);
    assertInvariant(
      Number.isSafeInteger(r.offset) && r.offset > previous,
      `offset ${r.offset} after ${previous} (frontier ${expectedFrontier})`,
    );
    previous = r.offset;
  }
}
