/**
 * One readiness rule for every role (docs/operations.md#metrics-health-and-readiness): a
 * process is ready when it is `active` (it does the namespace's work: a worker owning
 * partitions, the relay or view holding the namespace's lock) or a hot `standby` (a worker
 * in the group with no partition, a relay or view waiting for the lock), and its loop
 * turned within the budget (a poll, a publishing cycle, a try of the lock). `/readyz`
 * answers 200 with a body that starts with `active` or `standby`, or 503 with one that
 * starts with `starting` or `stalled`. So two replicas of any role are both ready, and a
 * process that stopped turning (an outage it is riding, a stuck loop) is not.
 */
import type { Readiness } from './metrics-server.js';

export type RoleState = 'starting' | 'standby' | 'active';

/** How a role's readiness reads in a state: what it does, and what its loop's turn is called. */
export interface RoleWords {
  /** e.g. `waiting for the view lock of namespace demo-1` */
  doing: string;
  /** e.g. `poll`, `cycle`, `lock try` */
  turn: string;
}

export class RoleReadiness {
  private state: RoleState = 'starting';
  private lastTurnAt: number | null = null;

  /** `turnBudgetMs`: how late a turn may be. */
  constructor(
    private readonly turnBudgetMs: number,
    private readonly words: (state: RoleState) => RoleWords,
  ) {}

  set(state: RoleState): void {
    this.state = state;
  }

  /** The process's loop turned (a poll returned, a cycle ended, the lock was tried). */
  turned(now = Date.now()): void {
    this.lastTurnAt = now;
  }

  readiness(now = Date.now()): Readiness {
    const { doing, turn } = this.words(this.state);
    if (this.state === 'starting' || this.lastTurnAt === null) return { ready: false, detail: `starting: ${doing}` };
    const ageMs = now - this.lastTurnAt;
    if (ageMs > this.turnBudgetMs) {
      return { ready: false, detail: `stalled: ${this.state}, ${doing}, last ${turn} ${ageMs} ms ago` };
    }
    return { ready: true, detail: `${this.state}: ${doing}, last ${turn} ${ageMs} ms ago` };
  }
}
