import { describe, expect, it } from 'vitest';
import { reportFromHeartbeat, reportFromSummary } from '../../src/tui/worker-report.js';

describe('worker reports', () => {
  it('reads a heartbeat row (process/heartbeat.ts)', () => {
    const report = reportFromHeartbeat({
      id: 'worker-a',
      role: 'worker',
      pid: 42,
      heartbeat_age_ms: 800,
      state: {
        group: 'running.polling',
        generation: 2,
        partitions: [
          {
            partition: 1,
            state: 'processing.deciding.committing',
            epoch: 3,
            frontier: 7,
            attempts: 1,
            operation: 'process',
            last_outcome: 'acknowledged',
          },
          { state: 'no partition number: ignored' },
        ],
      },
    });
    expect(report).toMatchObject({
      id: 'worker-a',
      pid: 42,
      groupState: 'running.polling',
      heartbeatAgeMs: 800,
      local: false,
    });
    expect(report.partitions).toEqual([
      expect.objectContaining({
        partition: 1,
        state: 'processing.deciding.committing',
        epoch: 3,
        frontier: 7,
        attempts: 1,
        operation: 'process',
        lastOutcome: 'acknowledged',
      }),
    ]);
  });

  it('tolerates a state of another shape (relay, view)', () => {
    const report = reportFromHeartbeat({
      id: 'relay-1',
      role: 'relay',
      pid: 1,
      heartbeat_age_ms: 0,
      state: { running: true },
    });
    expect(report.groupState).toBe('?');
    expect(report.partitions).toEqual([]);
  });

  it("reads the group's record of ended partition actors, with the reason", () => {
    const report = reportFromHeartbeat({
      id: 'worker-b',
      role: 'worker',
      pid: 9,
      heartbeat_age_ms: 300,
      state: {
        group: 'running.polling',
        partitions: [],
        ended: [
          { partition: 1, state: 'retired', frontier: 1307, reason: 'fenced', detail: 'epoch 3 is not ours (2)' },
          { partition: 0, state: 'processing', frontier: 1 },
        ],
      },
    });
    expect(report.ended).toEqual([
      expect.objectContaining({
        partition: 1,
        state: 'retired',
        frontier: 1307,
        endReason: 'fenced: epoch 3 is not ours (2)',
      }),
    ]);
  });

  it("never takes a view's output partitions for source partitions; shows its own state", () => {
    const report = reportFromHeartbeat({
      id: 'view-1',
      role: 'view',
      pid: 1,
      heartbeat_age_ms: 0,
      state: { state: 'active', partitions: [{ partition: 0, state: 'active', frontier: 10078 }] },
    });
    expect(report.groupState).toBe('active');
    expect(report.partitions).toEqual([]);
  });

  it('ages a deadline by the heartbeat age; an older row without one has none', () => {
    const row = (partition: Record<string, unknown>) =>
      reportFromHeartbeat({
        ...{ id: 'w', role: 'worker', pid: 1, heartbeat_age_ms: 1_200 },
        state: { group: 'running.polling', partitions: [{ partition: 0, state: 'claiming.claim', ...partition }] },
      }).partitions[0];
    expect(row({ operation: 'claim', deadline_in_ms: 5_000 })?.deadlineInMs).toBe(3_800);
    expect(row({ operation: 'claim', budget_ms: 20_000 })?.deadlineInMs).toBeNull();
  });

  it('reads the in-process summary, endings included', () => {
    const report = reportFromSummary({ id: 'worker-b', pid: 7 }, {
      state: { running: 'polling' },
      context: {
        partitions: [
          { partition: 0, phase: 'consuming', offset: 0, frontier: 5, released: false, end: null },
          {
            partition: 1,
            phase: 'retired',
            offset: 0,
            frontier: 3,
            released: true,
            end: { status: 'retired', reason: 'revoked', detail: 'the group revoked it' },
          },
        ],
      },
      partitions: [
        {
          state: { processing: { deciding: 'committing' } },
          context: {
            namespace: 'n',
            partition: 0,
            generation: 1,
            bounds: { partition: 0, retainedStart: 0, readCommittedEnd: 9 },
            token: { namespace: 'n', partition: 0, epoch: 4, generation: 1 },
            frontier: 5,
            epochFloor: 0,
            batch: [],
            expectedFrontier: 6,
            operation: 'decide',
            attempts: 1,
            release: null,
            lastOutcome: 'acknowledged',
            end: null,
          },
        },
      ],
    } as never);
    expect(report).toMatchObject({ id: 'worker-b', groupState: 'running.polling', local: true, heartbeatAgeMs: null });
    expect(report.partitions[0]).toMatchObject({
      partition: 0,
      state: 'processing.deciding.committing',
      epoch: 4,
      operation: 'decide',
    });
    expect(report.ended).toEqual([
      expect.objectContaining({ partition: 1, state: 'retired', endReason: 'revoked: the group revoked it' }),
    ]);
  });
});
