import { describe, expect, it } from 'vitest';
import { decodeProcessState, decodeWorkerBeat, encodeWorkerBeat } from '../../src/io/process/heartbeat.js';
import type { WorkerSummary } from '../../src/machines/worker-summary.js';

const summary = {
  state: { running: 'polling' },
  context: {
    generation: 3,
    partitions: [
      {
        partition: 1,
        phase: 'failed',
        frontier: 9,
        end: { status: 'failed', reason: 'budget', detail: 'claim took 20 s' },
      },
    ],
  },
  partitions: [
    {
      id: 'partition-0',
      state: { processing: { deciding: 'committing' } },
      context: { partition: 0, token: { epoch: 4 }, frontier: 5, attempts: 1, operation: 'decide', lastOutcome: null },
      deadlineAtMs: 31_000,
    },
  ],
} as unknown as WorkerSummary;

describe('the heartbeat codec', () => {
  it('decodes what it encodes, the deadline as time left at the beat', () => {
    const beat = encodeWorkerBeat(summary, 30_000);
    expect(JSON.parse(JSON.stringify(beat))).toEqual(beat);
    expect(decodeWorkerBeat(JSON.parse(JSON.stringify(beat)))).toEqual({
      group: 'running.polling',
      generation: 3,
      partitions: [
        {
          partition: 0,
          state: 'processing.deciding.committing',
          epoch: 4,
          frontier: 5,
          attempts: 1,
          operation: 'decide',
          deadline_in_ms: 1_000,
          last_outcome: null,
        },
      ],
      ended: [{ partition: 1, state: 'failed', frontier: 9, reason: 'budget', detail: 'claim took 20 s' }],
    });
  });

  it('gives nulls and empty lists for what is missing or malformed, never throws', () => {
    for (const state of [null, 7, 'text', [], { partitions: 'x', ended: [{ partition: 1, state: 'odd' }] }]) {
      expect(decodeWorkerBeat(state)).toEqual({ group: '?', generation: null, partitions: [], ended: [] });
    }
    expect(decodeProcessState({ state: 'standby' })).toBe('standby');
    expect(decodeProcessState({ group: 'running.polling', state: 'x' })).toBe('running.polling');
    expect(decodeProcessState(null)).toBeNull();
  });
});
