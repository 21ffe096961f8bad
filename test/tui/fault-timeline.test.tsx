import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { FaultTimeline } from '../../src/tui/fault-timeline.js';

describe('FaultTimeline', () => {
  it('shows the latest entries with their time since start', () => {
    const entries = [
      { atMs: 100, text: 'assigned partitions [0, 1]' },
      { atMs: 2_500, text: 'kill -9 worker-a' },
      { atMs: 12_340, text: 'p0 → processing.deciding.recovering' },
    ];
    const { lastFrame } = render(<FaultTimeline entries={entries} width={80} lines={3} />);
    expect((lastFrame() ?? '').split('\n')).toEqual([
      'timeline',
      '+   2.5s kill -9 worker-a',
      '+  12.3s p0 → processing.deciding.recovering',
    ]);
  });

  it('says nothing yet when empty', () => {
    const { lastFrame } = render(<FaultTimeline entries={[]} width={80} lines={3} />);
    expect(lastFrame()).toContain('nothing yet');
  });
});
