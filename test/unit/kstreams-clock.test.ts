/**
 * The Kafka Streams peer's clock in the bench (src/bench/kstreams-throughput.ts): from the first
 * to the last reading of its committed offsets, or, when one reading shows the whole backlog,
 * from its RUNNING state to that reading.
 */
import { describe, expect, it } from 'vitest';
import { commitSpan } from '../../src/bench/kstreams-throughput.js';

describe('the Kafka Streams peer clock', () => {
  it('counts the records after the first reading that shows any, to the last', () => {
    const span = commitSpan(
      [
        { at: 1_000, committed: 300 },
        { at: 1_100, committed: 900 },
        { at: 3_000, committed: 2_300 },
      ],
      500,
    );
    expect(span).toEqual({ clock: 'first_to_last_commit', records: 2_000, seconds: 2 });
  });

  it('runs from RUNNING to the reading that shows the whole backlog at once', () => {
    expect(commitSpan([{ at: 2_250, committed: 2_000 }], 1_000)).toEqual({
      clock: 'running_to_drained',
      records: 2_000,
      seconds: 1.25,
    });
  });

  it('has no span without a RUNNING line (the rate is then 0, not a guess)', () => {
    expect(commitSpan([{ at: 2_250, committed: 2_000 }], null).seconds).toBe(0);
  });
});
