/**
 * xstate's SimulatedClock, remembering each pending timer's delay and due time so a path
 * step "the 100 ms retry wait elapses" advances simulated time to exactly that timer.
 */
import { SimulatedClock } from 'xstate';

interface Timer {
  due: number;
  delayMs: number;
}

export class TestClock extends SimulatedClock {
  private readonly timers = new Map<number, Timer>();

  override setTimeout(fn: (...args: unknown[]) => void, timeout: number): number {
    const id: number = super.setTimeout(() => {
      this.timers.delete(id);
      fn();
    }, timeout);
    this.timers.set(id, { due: this.now() + timeout, delayMs: timeout });
    return id;
  }

  override clearTimeout(id: number): void {
    this.timers.delete(id);
    super.clearTimeout(id);
  }

  /** Advances to the due time of the one pending timer of this delay; fails when it is not unique. */
  fire(delayMs: number): void {
    const matching = [...this.timers.values()].filter((t) => t.delayMs === delayMs);
    const first = matching[0];
    if (matching.length !== 1 || first === undefined) {
      throw new Error(`expected one pending ${delayMs} ms timer, found ${matching.length}`);
    }
    const earlier = [...this.timers.values()].filter((t) => t.due < first.due);
    if (earlier.length > 0) throw new Error(`a ${delayMs} ms timer is not the next one to fire`);
    this.set(first.due);
  }

  /** The due time of the earliest pending timer. */
  nextDue(): number | undefined {
    const dues = [...this.timers.values()].map((t) => t.due);
    return dues.length === 0 ? undefined : Math.min(...dues);
  }

  pendingDelays(): number[] {
    return [...this.timers.values()].map((t) => t.delayMs);
  }
}
