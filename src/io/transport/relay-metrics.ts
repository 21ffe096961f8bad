/**
 * The relay's Prometheus metrics and readiness (issue 16): published and republished
 * outbox rows (Kafka Connect's source-record-write), the outbox backlog read from
 * PostgreSQL when scraped, and whether this relay is the active one.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Readiness } from '../process/metrics-server.js';
import { RoleReadiness } from '../process/role-readiness.js';
import { counterFromTotals } from '../process/total-counter.js';
import type { Queryable } from '../store/postgres.js';
import { pendingOutboxCountSql, type RelayStats } from './outbox-relay.js';

/**
 * An active relay cycles at least every second (its polling fallback), a standby tries the
 * lock every half second; a turn this late is not ready.
 */
export const relayCycleBudgetMs = 20_000;

export class RelayMetrics {
  private readonly ready: RoleReadiness;

  constructor(registry: Registry, namespace: string, stats: RelayStats, pool: Queryable) {
    this.ready = new RoleReadiness(relayCycleBudgetMs, (state) => {
      if (state === 'standby')
        return { doing: `waiting for the relay lock of namespace ${namespace}`, turn: 'lock try' };
      if (state === 'active') return { doing: `publishing the outbox of namespace ${namespace}`, turn: 'cycle' };
      return { doing: 'the relay lock not tried yet', turn: 'cycle' };
    });
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

  /** Another relay holds the lock: this one waits as a hot standby, trying it. */
  standby(): void {
    this.ready.set('standby');
  }

  /** The standby tried the lock (its turn while it waits). */
  lockTried(now = Date.now()): void {
    this.ready.turned(now);
  }

  /** This relay holds the namespace's lock and publishes. */
  activated(): void {
    this.ready.set('active');
  }

  /** The active relay's loop turned (a batch published, or nothing to publish). */
  cycled(now = Date.now()): void {
    this.ready.turned(now);
  }

  readiness(now = Date.now()): Readiness {
    return this.ready.readiness(now);
  }
}
