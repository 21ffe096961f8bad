/**
 * The chaos report's account of unknown commit outcomes (src/showcase/unknown-outcomes.ts):
 * each `process_attempt` with `observation: unknown` is resolved by the first later read of the
 * partition row in the same process (a recovery read, or the fresh claims that end a ride),
 * by the next process when it was killed first, or stays unresolved.
 */
import { describe, expect, it } from 'vitest';
import type { ChildLogLine } from '../../src/io/process/child-process.js';
import { summarizeUnknownOutcomes, unknownOutcomes } from '../../src/showcase/unknown-outcomes.js';

function line(fields: Record<string, unknown>): ChildLogLine {
  return { ...fields, raw: JSON.stringify(fields) };
}

const unknown = (partition: number, first: number, last: number, epoch = 3) =>
  line({ msg: 'process_attempt', observation: 'unknown', partition, first_offset: first, last_offset: last, epoch });
const observed = (partition: number, frontier: number, epoch = 3) =>
  line({ msg: 'store_observed', partition, frontier, epoch });

describe('unknown commit outcomes in a chaos run', () => {
  it('reads what the recovery read said: committed, not committed, another owner', () => {
    const found = unknownOutcomes('worker-a', [
      [
        unknown(0, 10, 19),
        observed(1, 40),
        observed(0, 20),
        unknown(0, 20, 29),
        observed(0, 20),
        unknown(1, 40, 49),
        observed(1, 50, 4),
      ],
    ]);
    expect(found.map((o) => [o.partition, o.first_offset, o.resolved_by, o.observed])).toEqual([
      [0, 10, 'observed', 'committed'],
      [0, 20, 'observed', 'not committed'],
      [1, 40, 'observed', 'another owner'],
    ]);
  });

  it('counts a ride that ended in fresh claims, a restart, and what nothing resolved', () => {
    const found = unknownOutcomes('worker-b', [
      [unknown(0, 0, 9), line({ msg: 'worker_outage' }), line({ msg: 'worker_outage_left' }), unknown(1, 5, 6)],
      [line({ msg: 'worker_started' }), unknown(0, 10, 12), line({ msg: 'worker_stopped' })],
    ]);
    expect(found.map((o) => [o.start, o.partition, o.resolved_by])).toEqual([
      [1, 0, 'ride'],
      [1, 1, 'restart'],
      [2, 0, 'unresolved'],
    ]);
    expect(summarizeUnknownOutcomes(found).by).toEqual({ observed: 0, ride: 1, restart: 1, unresolved: 1 });
  });

  it('ignores acknowledged, fenced and failed attempts', () => {
    const attempts = ['acknowledged', 'fenced', 'error'].map((observation) =>
      line({ msg: 'process_attempt', observation, partition: 0, first_offset: 0, last_offset: 1, epoch: 1 }),
    );
    expect(unknownOutcomes('worker-a', [attempts])).toEqual([]);
  });
});
