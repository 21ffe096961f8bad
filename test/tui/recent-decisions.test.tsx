import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { RecentDecisions } from '../../src/tui/recent-decisions.js';

const decisions = Array.from({ length: 6 }, (_, i) => ({
  partition: i % 2,
  offset: i,
  outcome: i === 3 ? 'DUPLICATE' : 'APPLIED',
  txn: `T${i}`,
  rev: i === 5 ? null : 1,
}));

describe('RecentDecisions', () => {
  it('shows the newest decisions that fit, oldest first', () => {
    const { lastFrame } = render(<RecentDecisions recent={decisions} width={80} lines={4} />);
    expect((lastFrame() ?? '').split('\n')).toEqual([
      'recent decisions (last 3 of 6)',
      'p1 @3 DUPLICATE T3 rev 1',
      'p0 @4 APPLIED T4 rev 1',
      'p1 @5 APPLIED T5',
    ]);
  });

  it('says none yet when empty', () => {
    const { lastFrame } = render(<RecentDecisions recent={[]} width={80} lines={3} />);
    expect(lastFrame()).toContain('none yet');
  });
});
