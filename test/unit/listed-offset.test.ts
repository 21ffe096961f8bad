/**
 * One ListOffsets result → an offset (src/io/kafka/kafka-admin.ts `listedOffset`). librdkafka answers
 * a leaderless partition with -1001 and no error (seen with a broker of the partition down,
 * issue 17): an outage, never an invariant violation.
 */
import { describe, expect, it } from 'vitest';
import { listedOffset } from '../../src/io/kafka/kafka-admin.js';
import { AmendsError } from '../../src/kernel/amends-error.js';
import { InvariantViolation } from '../../src/kernel/invariant.js';

type Result = Parameters<typeof listedOffset>[0];
const result = (offset: number, error?: unknown): Result =>
  ({ topic: 'ledger', partition: 1, offset, ...(error === undefined ? {} : { error }) }) as Result;

function failure(r: Result): unknown {
  try {
    listedOffset(r, 'log-start');
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('a listed offset', () => {
  it('is the broker’s offset when it is a non-negative integer', () => {
    expect(listedOffset(result(0), 'log-start')).toBe(0);
    expect(listedOffset(result(2 ** 40), 'read-committed-end')).toBe(2 ** 40);
  });

  it('-1001 (no leader answered) is an operational error naming the partition, not a bug', () => {
    const error = failure(result(-1001));
    expect(error).toBeInstanceOf(AmendsError);
    expect(error).not.toBeInstanceOf(InvariantViolation);
    expect((error as AmendsError).code).toBe('operational');
    expect((error as Error).message).toBe(
      'cannot list the log-start offset of ledger[1]: the broker answered -1001 (no leader answered for it); is a broker down or the partition without a leader?',
    );
    expect((failure(result(-1)) as AmendsError).code).toBe('operational');
  });

  it('an error result is operational; a number no broker sends is an invariant violation', () => {
    const withError = failure(result(-1, { code: 6, message: 'Broker: Not leader for partition' }));
    expect((withError as AmendsError).code).toBe('operational');
    expect((withError as Error).message).toMatch(/^cannot list the log-start offset of ledger\[1\]: /);
    expect(failure(result(1.5))).toBeInstanceOf(InvariantViolation);
    expect(failure(result(2 ** 60))).toBeInstanceOf(InvariantViolation);
  });
});
