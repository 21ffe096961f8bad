/**
 * Waiting from the outside for something another process does (a log line, a row, a drained
 * chain): read, and read again every `pollMs`, until the read yields a value or the budget
 * ends. Every wait has a budget; a wait can also end early, when what it waits on can no
 * longer come (the process it watches died) or the run is cancelled.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { operationalError } from '../../kernel/amends-error.js';

export interface PollBudget {
  budgetMs: number;
  pollMs: number;
  /** Ends the wait at once (Ctrl-C). */
  signal?: AbortSignal | undefined;
  /**
   * Called after each read that found nothing: throws to end the wait early. After the read,
   * so that what was written just before a process died is still found.
   */
  failEarly?: (() => void) | undefined;
  /** Says who waits, before the timeout's message: `worker-1: no … within 30 s`. */
  label?: string | undefined;
  /** Appended to the timeout's message: the last value read, the tail of a log. */
  lastSeen?: (() => string) | undefined;
}

/** Polls `read` until it yields a value other than undefined; fails past the budget. */
export async function pollUntil<T>(
  what: string,
  read: () => T | undefined | Promise<T | undefined>,
  budget: PollBudget,
): Promise<T> {
  const deadline = Date.now() + budget.budgetMs;
  for (;;) {
    budget.signal?.throwIfAborted();
    const value = await read();
    if (value !== undefined) return value;
    budget.failEarly?.();
    if (Date.now() > deadline) {
      const label = budget.label === undefined ? '' : `${budget.label}: `;
      const seen = budget.lastSeen === undefined ? '' : `: ${budget.lastSeen()}`;
      throw operationalError(`${label}no ${what} within ${budget.budgetMs / 1000} s${seen}`);
    }
    await sleep(budget.pollMs);
  }
}
