import { describe, expect, it } from 'vitest';
import { operationBudgetMs } from '../../src/machines/limits.js';
import { budgetedStatePaths, OperationDeadlines } from '../../src/machines/operation-deadlines.js';

describe('operation deadlines (worker.md §6)', () => {
  it('are the states whose after holds the operation budget, read from the chart', () => {
    expect(budgetedStatePaths().sort()).toEqual(['claiming', 'processing.deciding', 'seeking']);
  });

  it('start when a budgeted state is entered, hold through its retries, end when it is left', () => {
    let now = 1_000;
    const deadlines = new OperationDeadlines(() => now);
    deadlines.observe('partition-0', 'unassigned');
    expect(deadlines.deadlineAtMs('partition-0')).toBeNull();
    deadlines.observe('partition-0', { claiming: 'claim' });
    expect(deadlines.deadlineAtMs('partition-0')).toBe(1_000 + operationBudgetMs);
    now = 3_000;
    deadlines.observe('partition-0', { claiming: 'wait' });
    deadlines.observe('partition-0', { claiming: 'claim' });
    expect(deadlines.deadlineAtMs('partition-0')).toBe(1_000 + operationBudgetMs);
    deadlines.observe('partition-0', { seeking: 'observeStore' });
    expect(deadlines.deadlineAtMs('partition-0')).toBe(3_000 + operationBudgetMs);
    now = 4_000;
    deadlines.observe('partition-0', { processing: 'idle' });
    expect(deadlines.deadlineAtMs('partition-0')).toBeNull();
    deadlines.observe('partition-0', { processing: { deciding: 'committing' } });
    expect(deadlines.deadlineAtMs('partition-0')).toBe(4_000 + operationBudgetMs);
    expect(deadlines.deadlineAtMs('partition-1')).toBeNull();
  });
});
