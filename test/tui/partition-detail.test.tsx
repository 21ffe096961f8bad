import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { PartitionDetail, statePath } from '../../src/tui/partition-detail.js';
import { partition } from './fixtures.js';

describe('PartitionDetail', () => {
  it('shows the statechart path and the context: epoch, configuration revision, attempts, deadline', () => {
    const p = partition(1, {
      state: 'processing.deciding.recovering',
      owner: 'worker-a',
      epoch: 4,
      configRevision: 2,
      frontier: 17,
      end: 20,
      lag: 3,
      attempts: 2,
      operation: 'decide',
      deadlineInMs: 12_340,
      lastOutcome: 'unknown',
    });
    const { lastFrame } = render(<PartitionDetail partition={p} width={120} lines={4} />);
    const frame = (lastFrame() ?? '').split('\n');
    expect(frame[0]).toBe('partition 1 · path processing › deciding › recovering');
    expect(frame[1]).toBe('context  epoch 4 · config revision 2 · frontier 17 · end 20 · lag 3 · owner worker-a');
    expect(frame[2]).toBe('operation decide · attempts 2 · deadline in 12.3 s · last outcome unknown');
  });

  it('says a deadline passed, and shows none between operations', () => {
    const passed = render(<PartitionDetail partition={partition(1, { deadlineInMs: -5 })} width={120} lines={4} />);
    expect(passed.lastFrame()).toContain('deadline passed');
    const idle = render(<PartitionDetail partition={partition(1, { operation: null })} width={120} lines={4} />);
    expect(idle.lastFrame()).toContain('attempts - · deadline - ·');
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
