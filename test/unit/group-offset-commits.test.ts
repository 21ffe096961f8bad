import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { CoalescedCommits } from '../../src/io/worker/group-offset-commits.js';

/** A clock the test moves, and the commits sent so far. */
function harness(intervalMs = 1_000) {
  let now = 0;
  const sent: [number, number][] = [];
  const commits = new CoalescedCommits(
    (p, f) => sent.push([p, f]),
    intervalMs,
    () => now,
  );
  return { commits, sent, advance: (ms: number) => (now += ms) };
}

describe('group offset commits, coalesced per partition', () => {
  it('sends the first frontier at once and the latest of those within the interval once it is up', async () => {
    const { commits, sent, advance } = harness(40);
    commits.offer(0, 5);
    commits.offer(0, 6);
    commits.offer(0, 7);
    commits.offer(1, 3);
    expect(sent).toEqual([
      [0, 5],
      [1, 3],
    ]);
    advance(40);
    await sleep(60);
    expect(sent).toEqual([
      [0, 5],
      [1, 3],
      [0, 7],
    ]);
    // The interval counts from that trailing commit.
    commits.offer(0, 8);
    expect(sent).toHaveLength(3);
    advance(40);
    commits.flush();
    expect(sent.at(-1)).toEqual([0, 8]);
  });

  it('flush sends every waiting frontier once; commitNow replaces a waiting one', () => {
    const { commits, sent } = harness();
    commits.offer(0, 1);
    commits.offer(1, 1);
    commits.offer(0, 2);
    commits.offer(1, 9);
    commits.commitNow(1, 4);
    commits.flush();
    commits.flush();
    expect(sent).toEqual([
      [0, 1],
      [1, 1],
      [1, 4],
      [0, 2],
    ]);
  });

  it('sends a frontier at once again when the last commit is older than the interval', () => {
    const { commits, sent, advance } = harness();
    commits.offer(0, 1);
    advance(1_000);
    commits.offer(0, 2);
    expect(sent).toEqual([
      [0, 1],
      [0, 2],
    ]);
  });
});
