import { describe, expect, it } from 'vitest';
import { derivePartitions, type PartitionInputs } from '../../src/tui/partition-states.js';
import { actor, report } from './fixtures.js';

function inputs(patch: Partial<PartitionInputs>): PartitionInputs {
  return {
    partitionCount: 2,
    reports: [],
    storeRows: [],
    ends: null,
    lastListedBy: new Map(),
    rates: new Map(),
    ...patch,
  };
}

describe('derivePartitions', () => {
  it('shows every partition, unassigned when nobody reports it', () => {
    expect(derivePartitions(inputs({})).map((p) => p.state)).toEqual(['unassigned', 'unassigned']);
  });

  it('takes the state from the worker that lists the partition, and lag from the broker end', () => {
    const [p0] = derivePartitions(
      inputs({
        reports: [report('w1', { partitions: [actor(0, 'processing.idle', { epoch: 2, frontier: 4 })] })],
        storeRows: [
          { partition: 0, epoch: 2, frontier: 5, configRevision: 3, owner: 'w1', lastWorkCounts: { APPLIED: 1 } },
        ],
        ends: new Map([[0, 9]]),
      }),
    );
    expect(p0).toMatchObject({ state: 'processing.idle', owner: 'w1', epoch: 2, frontier: 5, end: 9, lag: 4 });
    expect(p0?.configRevision).toBe(3);
  });

  it('prefers a live worker over a stopped one, and marks a stale heartbeat', () => {
    const parts = derivePartitions(
      inputs({
        reports: [
          report('old', { groupState: 'stopped', partitions: [actor(0, 'processing.idle')] }),
          report('new', { heartbeatAgeMs: 9_000, partitions: [actor(0, 'claiming.claim')] }),
        ],
      }),
    );
    expect(parts[0]?.state).toBe('(stale) claiming.claim');
    expect(parts[0]?.owner).toBe('new');
  });

  it('shows the row’s configuration revision; revision 1 without a row; unknown before PostgreSQL is read', () => {
    const row = { partition: 1, epoch: 2, frontier: 7, configRevision: 2, owner: null, lastWorkCounts: null };
    expect(derivePartitions(inputs({ storeRows: [row] })).map((p) => p.configRevision)).toEqual([1, 2]);
    expect(derivePartitions(inputs({ storeRows: null })).map((p) => p.configRevision)).toEqual([null, null]);
  });

  it('shows retired when the worker that listed it no longer does, failed when its group failed', () => {
    const lastListedBy = new Map([
      [0, 'w1'],
      [1, 'w2'],
    ]);
    const parts = derivePartitions(
      inputs({
        reports: [report('w1', { groupState: 'stopped' }), report('w2', { groupState: 'failed' })],
        lastListedBy,
      }),
    );
    expect(parts.map((p) => p.state)).toEqual(['retired', 'failed']);
  });

  it('shows retired when the recorded owner has stopped (a dashboard started after the run)', () => {
    const parts = derivePartitions(
      inputs({
        reports: [report('w1', { groupState: 'stopped' })],
        storeRows: [{ partition: 1, epoch: 1, frontier: 3, configRevision: 1, owner: 'w1', lastWorkCounts: null }],
      }),
    );
    expect(parts.map((p) => p.state)).toEqual(['unassigned', 'retired']);
  });

  it('uses the in-process worker’s exact endings', () => {
    const parts = derivePartitions(
      inputs({
        reports: [
          report('me', {
            local: true,
            heartbeatAgeMs: null,
            ended: [actor(1, 'failed', { endReason: 'retries_exhausted: three attempts failed' })],
          }),
        ],
      }),
    );
    expect(parts[1]).toMatchObject({ state: 'failed', endReason: 'retries_exhausted: three attempts failed' });
  });

  it("uses another process's reported endings, with the reason (from its heartbeat)", () => {
    const parts = derivePartitions(
      inputs({
        reports: [
          report('w2', { partitions: [actor(0, 'processing.idle')] }),
          report('w1', { ended: [actor(1, 'retired', { endReason: 'fenced: epoch 4 is not ours (3)' })] }),
        ],
      }),
    );
    expect(parts[1]).toMatchObject({ state: 'retired', owner: 'w1', endReason: 'fenced: epoch 4 is not ours (3)' });
  });
});
