/**
 * Relay and view ride through a database or broker outage the way the worker does
 * (docs/design.md#outages): the session that failed is dropped, the process waits with growing,
 * cancellable pauses and starts a fresh session from its durable position (the outbox rows
 * still pending, the view frontiers in PostgreSQL). The budget runs from the first failure
 * until a session reports progress; past it, the outage is the process's one-line exit 1.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { operationalError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { probeWaitMs } from '../../machines/limits.js';
import type { JsonLog } from './json-log.js';

export interface RideOptions {
  /** `--outage-budget-s` in ms; 0: the first outage ends the process. */
  budgetMs: number;
  signal: AbortSignal;
  log: JsonLog;
  /** `relay` or `view`: names the log line `<role>_outage`. */
  role: string;
  /**
   * Which failures are outages: the `outage` flag along the cause chain plus the adapter
   * rooms' tests of their clients' errors, composed where the rider is wired
   * (cli/dependency-outage.ts); required, so no rider can lose a room's test by omission.
   */
  isOutage: (error: unknown) => boolean;
  now?: () => number;
}

/** A session: runs until the stop signal (resolves) or a failure (rejects); calls `progressed` as it works. */
export type Session<T> = (progressed: () => void) => Promise<T>;

/** Runs `session` again after each outage within the budget; resolves with its result, or undefined on stop. */
export async function rideThrough<T>(options: RideOptions, session: Session<T>): Promise<T | undefined> {
  const now = options.now ?? Date.now;
  let since: number | null = null;
  let failures = 0;
  const progressed = () => {
    since = null;
    failures = 0;
  };
  while (!options.signal.aborted) {
    try {
      return await session(progressed);
    } catch (error) {
      if (options.signal.aborted) return undefined;
      if (!options.isOutage(error)) throw error;
      since ??= now();
      failures += 1;
      const elapsedMs = now() - since;
      const detail = errorMessage(error);
      if (elapsedMs >= options.budgetMs) {
        // The budget first: the detail ends with what to check, and stays last.
        const spent = options.budgetMs > 0 ? `outage budget of ${options.budgetMs / 1000} s spent: ` : '';
        throw operationalError(`${spent}${detail}`, error);
      }
      options.log.write(
        `${options.role}_outage`,
        { detail, failures, elapsed_ms: elapsedMs, budget_ms: options.budgetMs },
        'warn',
      );
      await sleep(probeWaitMs(failures), undefined, { signal: options.signal }).catch(() => {});
    }
  }
  return undefined;
}

/**
 * For one-shot commands (source-load, rebuild-create, manifest-recover): runs `attempt` up to
 * `attempts` times while it fails with an outage, with the riders' pauses between tries, so a
 * broker's failover (a new leader is elected within the broker session timeout, 9 s) does not
 * end the command; anything else, or the last outage, is thrown as it came. `isOutage` as in
 * `RideOptions`.
 */
export async function retryOutages<T>(
  attempts: number,
  attempt: () => Promise<T>,
  isOutage: (error: unknown) => boolean,
): Promise<T> {
  for (let tried = 1; ; tried++) {
    try {
      return await attempt();
    } catch (error) {
      if (tried >= attempts || !isOutage(error)) throw error;
      await sleep(probeWaitMs(tried));
    }
  }
}
