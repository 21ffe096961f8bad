import { describe, expect, it } from 'vitest';
import { cell, fitColumns, planSections, visibleWindow } from '../../src/tui/layout.js';
import { partitionColumns } from '../../src/tui/partition-table.js';

const sum = (plan: Record<string, number>) => Object.values(plan).reduce((a, b) => a + b, 0);

describe('layout', () => {
  it('pads and cuts cells to an exact width', () => {
    expect(cell('abc', 5)).toBe('abc  ');
    expect(cell('abc', 5, 'right')).toBe('  abc');
    expect(cell('abcdef', 4)).toBe('abc…');
  });

  it.each([40, 80, 100, 120, 200])(
    'fits the partition columns in %i columns, keeping state and frontier',
    (columns) => {
      const chosen = fitColumns(partitionColumns, columns);
      const width = chosen.reduce((n, c) => n + c.width + 1, -1);
      expect(width).toBeLessThan(columns);
      if (columns >= 80)
        expect(chosen.map((c) => c.key)).toEqual(expect.arrayContaining(['partition', 'state', 'frontier', 'lag']));
    },
  );

  it.each([
    [30, 2, 2, 20, null, false],
    [30, 12, 2, 20, 10, true],
    [10, 12, 6, 20, 10, true],
    [5, 64, 3, 0, null, true],
    [60, 64, 3, 0, 3, false],
  ])(
    'keeps the frame below %i rows (%i partitions, %i workers)',
    (rows, partitions, workers, recent, timeline, selected) => {
      const plan = planSections(rows, { partitions, workers, recent, timeline, selected });
      expect(sum({ ...plan })).toBeLessThanOrEqual(rows - 1);
      if (rows >= 10) expect(plan.partitions).toBeGreaterThanOrEqual(2);
    },
  );

  it('keeps the selection inside the visible window', () => {
    expect(visibleWindow(10, 4, null)).toEqual({ start: 0, end: 4 });
    expect(visibleWindow(10, 4, 9)).toEqual({ start: 6, end: 10 });
    expect(visibleWindow(10, 4, 2)).toEqual({ start: 0, end: 4 });
    expect(visibleWindow(3, 4, 2)).toEqual({ start: 0, end: 3 });
  });
});
