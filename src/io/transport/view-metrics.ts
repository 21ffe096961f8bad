/**
 * The view's Prometheus metrics and readiness (issue 16): output records by what the view
 * did with them (applied, stale, duplicate; docs/design.md#transport), from the per-partition counts
 * it keeps in PostgreSQL with its frontier, so they equal `inspect --json`.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Readiness } from '../process/metrics-server.js';
import { RoleReadiness } from '../process/role-readiness.js';
import { counterFromTotals } from '../process/total-counter.js';
import type { OutputView } from './output-view.js';

/**
 * The view polls continuously (each poll waits under a second), a standby tries the lock
 * every half second; a turn this late is not ready.
 */
export const viewPollBudgetMs = 20_000;

const results = ['applied', 'stale', 'duplicate'] as const;

export class ViewMetrics {
  private view: OutputView | null = null;
  private endOf: (partition: number) => number | undefined = () => undefined;
  private readonly ready: RoleReadiness;

  constructor(registry: Registry, namespace: string) {
    this.ready = new RoleReadiness(viewPollBudgetMs, (state) => {
      if (state === 'standby')
        return { doing: `waiting for the view lock of namespace ${namespace}`, turn: 'lock try' };
      if (state === 'active') return { doing: `the view of namespace ${namespace}`, turn: 'poll' };
      return { doing: 'the view lock not tried yet', turn: 'poll' };
    });
    counterFromTotals({
      registry,
      name: 'amends_view_records_total',
      help: 'Output records the view consumed, by result: applied (a higher version), stale (lower), duplicate (same)',
      labelNames: ['namespace', 'partition', 'result'],
      totals: () =>
        [...(this.view?.counts ?? new Map())].flatMap(([partition, counts]) =>
          results.map((result) => ({
            labels: { namespace, partition: String(partition), result },
            total: counts[result],
          })),
        ),
    });
    const metrics = this;
    new Gauge({
      name: 'amends_view_lag',
      help: "Output records between the active view's frontier and the output topic's end at its latest fetch",
      labelNames: ['namespace', 'partition'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [partition, frontier] of metrics.view?.positions ?? []) {
          const end = metrics.endOf(partition);
          if (end !== undefined) this.set({ namespace, partition: String(partition) }, Math.max(0, end - frontier));
        }
      },
    });
  }

  /** Where the lag's ends come from: the output consumer's cached ends (output-consumer.ts). */
  readsEndsFrom(endOf: (partition: number) => number | undefined): void {
    this.endOf = endOf;
  }

  /** Another view holds the lock: this one waits as a hot standby, trying it. */
  standby(): void {
    this.ready.set('standby');
  }

  /** The standby tried the lock (its turn while it waits). */
  lockTried(now = Date.now()): void {
    this.ready.turned(now);
  }

  /** The view became active with these counts (read from PostgreSQL). */
  activated(view: OutputView): void {
    this.view = view;
    this.ready.set('active');
  }

  polled(now = Date.now()): void {
    this.ready.turned(now);
  }

  readiness(now = Date.now()): Readiness {
    return this.ready.readiness(now);
  }
}
