/**
 * `--outage-budget-s` (docs/design.md#outages): how long worker, relay and view ride
 * through a database or broker outage before they exit 1. Whole seconds; 0 keeps the old
 * behaviour of exiting at the first failure.
 */
import { usageError } from '../kernel/amends-error.js';
import { defaultOutageBudgetMs } from '../machines/limits.js';

/** `--outage-budget-s`'s default, in seconds. */
export const outageBudgetDefaultS = defaultOutageBudgetMs / 1000;

/** The flag as worker, relay and view declare it (meow). */
export const outageBudgetFlag = { outageBudgetS: { type: 'number', default: outageBudgetDefaultS } } as const;

/** A riding worker does not poll: budget + one 20 s operation < the 60 s max.poll.interval.ms.
 * Relay and view take the same bound, so one setting fits all three. */
export const outageBudgetMaxS = 35;

/** The budget in ms, or a usage error naming the allowed range. */
export function outageBudgetFrom(seconds: unknown, maxS: number): number {
  if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds) || seconds < 0 || seconds > maxS) {
    throw usageError(`--outage-budget-s must be an integer in [0, ${maxS}] (seconds), not ${String(seconds)}`);
  }
  return seconds * 1000;
}
