import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { PartitionTable, partitionColumns } from '../../src/tui/partition-table.js';
import { lifecycleStates, partition } from './fixtures.js';

function lines(frame: string | undefined): string[] {
  return (frame ?? '').split('\n');
}

describe('PartitionTable', () => {
  it.each(lifecycleStates)('shows a partition in state %s with its row', (state) => {
    const p = partition(0, {
      state,
      owner: 'worker-a',
      epoch: 3,
      configRevision: 2,
      frontier: 10,
      end: 12,
      lag: 2,
      recordsPerSecond: 4.25,
    });
    const { lastFrame } = render(<PartitionTable partitions={[p]} selected={null} width={120} lines={5} />);
    const [title, row] = lines(lastFrame());
    expect(title).toMatch(/^\s+p state\s+owner\s+epoch\s+cfg\s+frontier\s+end\s+lag\s+last outcome\s+rec\/s$/);
    expect(row).toContain(state);
    expect(row).toMatch(/^\s+0 /);
    expect(row).toMatch(/worker-a\s+3\s+2\s+10\s+12\s+2\s+-\s+4\.3$/);
    expect(lines(lastFrame())).toHaveLength(2);
  });

  it('keeps every row the same width, whatever the content', () => {
    const ps = [
      partition(0, { state: 'processing.deciding.committing', owner: 'a-very-long-worker-id-0123456789' }),
      partition(1),
    ];
    const { lastFrame } = render(<PartitionTable partitions={ps} selected={null} width={120} lines={5} />);
    const widths = lines(lastFrame()).map((l) => l.length);
    expect(lines(lastFrame())[1]).toContain('a-very-long-worke…');
    expect(new Set(widths).size).toBe(1);
    for (const l of lines(lastFrame())) expect(l.length).toBeLessThanOrEqual(119);
  });

  it('drops the least important columns at 80 columns', () => {
    const p = partition(0, { state: 'processing.idle', owner: 'worker-a', lastOutcome: 'acknowledged' });
    const { lastFrame } = render(<PartitionTable partitions={[p]} selected={null} width={80} lines={3} />);
    const [title] = lines(lastFrame());
    expect(title).not.toContain('owner');
    expect(title).not.toContain('last outcome');
    expect(title).toContain('frontier');
    expect(title).toContain('lag');
    for (const l of lines(lastFrame())) expect(l.length).toBeLessThan(80);
  });

  it('shows a window around the selection when the rows do not fit', () => {
    const ps = Array.from({ length: 10 }, (_, i) => partition(i, { state: 'processing.idle' }));
    const { lastFrame } = render(<PartitionTable partitions={ps} selected={8} width={100} lines={5} />);
    const frame = lines(lastFrame());
    expect(frame).toHaveLength(5);
    expect(frame.some((l) => /^\s+8 /.test(l))).toBe(true);
    expect(frame[4]).toContain('7 more partitions');
  });

  it('declares widths that fit 120 columns in full', () => {
    const total = partitionColumns.reduce((n, c) => n + c.width + 1, -1);
    expect(total).toBeLessThan(120);
  });
});
