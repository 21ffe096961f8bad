/**
 * The relay's Prometheus metrics and readiness (issue 16): published and republished
 * outbox rows (Kafka Connect's source-record-write), the outbox backlog read from
 * PostgreSQL when scraped, and whether this relay is the active one.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Readiness } from '../process/metrics-server.js';
import { counterFromTotals } from '../process/total-counter.js';
import type { Queryable } from '../store/postgres.js';
import { pendingOutboxCountSql, type RelayStats } from './outbox-relay.js';

/** An active relay cycles at least every second (its polling fallback); this late is not ready. */
export const relayCycleBudgetMs = 20_000;

export class RelayMetrics {
  private lastCycleAt: number | null = null;

  constructor(
    registry: Registry,
    private readonly namespace: string,
    private readonly stats: RelayStats,
    pool: Queryable,
  ) {
    const labels = { namespace };
    counterFromTotals({
      registry,
      name: 'amends_relay_published_total',
      help: 'Outbox rows this relay published and marked published',
      labelNames: ['namespace'],
      totals: () => [{ labels, total: stats.published_rows }],
    });
    counterFromTotals({
      registry,
      name: 'amends_relay_republished_total',
      help: 'Outbox rows published again after a failed or unknown delivery (identical duplicates)',
      labelNames: ['namespace'],
      totals: () => [{ labels, total: stats.republish_rows }],
    });
    new Gauge({
      name: 'amends_relay_active',
      help: '1 while this relay holds the namespace lock and publishes, 0 as a standby',
      labelNames: ['namespace'],
      registers: [registry],
      collect() {
        this.set(labels, stats.state === 'active' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'amends_outbox_pending',
      help: 'Outbox rows not yet published (read from PostgreSQL when scraped)',
      labelNames: ['namespace'],
      registers: [registry],
      async collect() {
        const result = await pool.query(pendingOutboxCountSql, [namespace]);
        this.set(labels, Number((result.rows[0] as { n: string } | undefined)?.n ?? 0));
      },
    });
  }

  /** The active relay's loop turned (a batch published, or nothing to publish). */
  cycled(now = Date.now()): void {
    this.lastCycleAt = now;
  }

  readiness(now = Date.now()): Readiness {
    const { state } = this.stats;
    if (state === 'standby') return { ready: true, detail: `standby for namespace ${this.namespace}` };
    if (state !== 'active') return { ready: false, detail: state };
    if (this.lastCycleAt === null) return { ready: false, detail: 'active, no cycle yet' };
    const ageMs = now - this.lastCycleAt;
    if (ageMs > relayCycleBudgetMs) return { ready: false, detail: `active, last cycle ${ageMs} ms ago` };
    return { ready: true, detail: `active, last cycle ${ageMs} ms ago` };
  }
}
