/**
 * The limits of the partition lifecycle (docs/design.md#partition-lifecycle, #unknown-outcomes),
 * named with their units. The machines turn them into xstate delays, so tests run them on a
 * SimulatedClock.
 */

/** One shared deadline per operation (claim, seek, one decision), retries and waits included.
 * It stays below the one-minute rebalance timeout so a rebalance never outlives it. */
export const operationBudgetMs = 20_000;

/** At most three store attempts per operation (docs/design.md#unknown-outcomes). */
export const storeAttemptsMax = 3;

/** A limit in milliseconds as the diagnostics say it ("20 s"): messages name a limit from its
 * constant, never from a repeated literal. */
export function secondsText(ms: number): string {
  return `${ms / 1000} s`;
}

/** The cancellable waits before the second and the third attempt. */
export const retryWaitsMs = [100, 200] as const;

/**
 * `--batch-size` default: the most records a poll takes, and so one decision
 * (docs/design.md#partition-lifecycle). A poll returns what is queued up to it and waits only
 * for the first record, so a larger limit costs nothing at low load. 2000 was within 0.95× of
 * the best batch in each of three full bench runs (docs/benchmarks.md: 25,295 of 25,370;
 * 26,351 of 27,805; 27,753, the best), where 500 fell to 0.80× in one; `--batch-size 1` keeps
 * the seed's per-record cycle for whoever wants it.
 */
export const defaultBatchSize = 2000;

/** The wait before attempt `attempt + 1`, given that `attempt` attempts have been made (1-based). */
export function retryWaitMs(attemptsMade: number): number {
  const last = retryWaitsMs[retryWaitsMs.length - 1] ?? 0;
  return retryWaitsMs[attemptsMade - 1] ?? last;
}

/** `--outage-budget-s` default (docs/design.md#outages): how long a database or broker
 * outage may last before the process exits 1. Budget + one operation's 20 s must stay below the
 * consumer's one-minute max.poll.interval.ms: a riding group does not poll. */
export const defaultOutageBudgetMs = 30_000;

/** Rides in a row without a committed decision before the process exits 1 (docs/design.md#outages):
 * each ride ends once both dependencies answer, so only this catches a store that answers
 * claims but fails every batch. */
export const ridesWithoutDecisionMax = 10;

/** The cancellable waits between probes of a riding group, doubling up to the last. */
export const probeWaitsMs = [250, 500, 1_000, 2_000] as const;

/** The wait after `probesMade` failed probes (1-based). */
export function probeWaitMs(probesMade: number): number {
  const last = probeWaitsMs[probeWaitsMs.length - 1] ?? 0;
  return probeWaitsMs[probesMade - 1] ?? last;
}
