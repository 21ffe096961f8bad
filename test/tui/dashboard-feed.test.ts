import { describe, expect, it } from 'vitest';
import type { StoreInspection } from '../../src/io/store/inspect-queries.js';
import { sampleFromInspection, viewLagOf } from '../../src/tui/dashboard-feed.js';

const inspection = {
  partitions: [
    {
      partition: 0,
      epoch: 2,
      frontier: 10,
      config_revision: 2,
      owner: 'worker-a',
      last_work: {
        first_offset: 9,
        last_offset: 9,
        records: 1,
        counts: { APPLIED: 1 },
        epoch: 2,
        work_elapsed_ns: 1,
        committed_at: '2026-01-01T00:00:00.000Z',
      },
    },
  ],
  counts: { APPLIED: 9, DUPLICATE: 1 },
  outputs: { versions: 10, retractions: 1 },
  quarantine: 0,
  outbox: { pending: 2, published: 8 },
  workers: [
    {
      id: 'worker-a',
      role: 'worker',
      pid: 7,
      started_at: '2026-01-01T00:00:00.000Z',
      heartbeat_at: '2026-01-01T00:00:01.000Z',
      heartbeat_age_ms: 400,
      state: {
        group: 'running.polling',
        partitions: [{ partition: 0, state: 'processing.idle', epoch: 2, frontier: 10 }],
      },
    },
  ],
  recent: [{ partition: 0, offset: 9, outcome: 'APPLIED', txn: 'T5', rev: 2 }],
} as unknown as StoreInspection;

describe('the PostgreSQL feed’s sample', () => {
  it('turns an inspection into the store’s sample', () => {
    const sample = sampleFromInspection(inspection, new Map([[0, 12]]));
    expect(sample.partitions).toEqual([
      { partition: 0, epoch: 2, frontier: 10, configRevision: 2, owner: 'worker-a', lastWorkCounts: { APPLIED: 1 } },
    ]);
    expect(sample.ends?.get(0)).toBe(12);
    expect(sample.workers[0]).toMatchObject({ id: 'worker-a', groupState: 'running.polling', heartbeatAgeMs: 400 });
    expect(sample.workers[0]?.partitions[0]).toMatchObject({ partition: 0, state: 'processing.idle' });
    expect(sample.outbox).toEqual({ pending: 2, published: 8 });
    expect(sample.viewLag).toBeNull();
  });

  it('sums the view lag over the output partitions, unknown without a view or the broker', () => {
    const view = {
      output_topic: 'out',
      partitions: [
        { partition: 0, frontier: 5 },
        { partition: 1, frontier: 3 },
      ],
    };
    const outputEnds = new Map([
      [0, 7],
      [1, 3],
    ]);
    expect(viewLagOf(view, outputEnds)).toBe(2);
    expect(viewLagOf(view, null)).toBeNull();
    expect(viewLagOf(null, outputEnds)).toBeNull();
    const withView = { ...inspection, view } as unknown as StoreInspection;
    expect(sampleFromInspection(withView, null, outputEnds).viewLag).toBe(2);
  });
});
