import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { PartitionDetail, statePath } from '../../src/tui/partition-detail.js';
import { partition } from './fixtures.js';

describe('PartitionDetail', () => {
  it('shows the statechart path and the context: epoch, attempts, budget', () => {
    const p = partition(1, {
      state: 'processing.deciding.recovering',
      owner: 'worker-a',
      epoch: 4,
      frontier: 17,
      end: 20,
      lag: 3,
      attempts: 2,
      budgetMs: 20_000,
      operation: 'decide',
      lastOutcome: 'unknown',
    });
    const { lastFrame } = render(<PartitionDetail partition={p} width={120} lines={4} />);
    const frame = (lastFrame() ?? '').split('\n');
    expect(frame[0]).toBe('partition 1 · path processing › deciding › recovering');
    expect(frame[1]).toContain('epoch 4 · frontier 17 · end 20 · lag 3 · owner worker-a');
    expect(frame[2]).toBe('operation decide · attempts 2 · budget 20000 ms · last outcome unknown');
  });

  it('says why an ended actor ended', () => {
    const p = partition(0, { state: 'retired', endReason: 'revoked: the group revoked the partition' });
    const { lastFrame } = render(<PartitionDetail partition={p} width={120} lines={4} />);
    expect(lastFrame()).toContain('ended    revoked: the group revoked the partition');
  });

  it('turns a state value into a path', () => {
    expect(statePath('claiming.claim')).toBe('claiming › claim');
    expect(statePath('unassigned')).toBe('unassigned');
  });
});
