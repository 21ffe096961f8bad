/**
 * The limits of the partition lifecycle (worker.md §4, §6), named with their units.
 * The machines turn them into xstate delays, so tests run them on a SimulatedClock.
 */

/** One shared deadline per operation (claim, seek, one decision), retries and waits included.
 * It stays below the one-minute rebalance timeout so a rebalance never outlives it. */
export const operationBudgetMs = 20_000;

/** At most three store attempts per operation (worker.md §6). */
export const storeAttemptsMax = 3;

/** The cancellable waits before the second and the third attempt. */
export const retryWaitsMs = [100, 200] as const;

/** `--batch-size` default: records per poll, and so per decision (worker.md §4.3). */
export const defaultBatchSize = 1;

/** The wait before attempt `attempt + 1`, given that `attempt` attempts have been made (1-based). */
export function retryWaitMs(attemptsMade: number): number {
  const last = retryWaitsMs[retryWaitsMs.length - 1] ?? 0;
  return retryWaitsMs[attemptsMade - 1] ?? last;
}
