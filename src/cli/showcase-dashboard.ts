/**
 * `amendsctl showcase --tui`: the namespace's dashboard (the components of `amends tui`, fed
 * from PostgreSQL and the broker) with the showcase's fault timeline section. It draws from
 * the start; the namespace's rows appear once the showcase has created it.
 */
import pg from 'pg';
import type { Manifest } from '../domain/config.js';
import { databaseTarget, sessionConfig } from '../io/store/postgres.js';
import { DashboardFeed } from '../tui/dashboard-feed.js';
import { DashboardStore } from '../tui/dashboard-store.js';
import { type RunningDashboard, runDashboard } from '../tui/run-dashboard.js';

/** The showcase's configuration (fixtures/two-keys.config.json) has two partitions. */
const showcasePartitions = 2;

export class ShowcaseDashboard {
  readonly store: DashboardStore;
  private pool: pg.Pool | undefined;
  private feed: DashboardFeed | undefined;
  private dashboard: RunningDashboard;

  constructor(
    private readonly databaseUrl: string,
    private readonly brokers: string,
    onQuit: () => void,
  ) {
    this.store = new DashboardStore({
      header: {
        mode: 'showcase',
        namespace: '(creating)',
        sourceTopic: '(creating)',
        incarnation: '',
        brokers,
        database: databaseTarget(databaseUrl),
        logFile: null,
      },
      partitionCount: showcasePartitions,
      timeline: true,
    });
    this.dashboard = runDashboard(this.store, onQuit);
  }

  start(manifest: Manifest): void {
    this.store.setHeader({
      namespace: manifest.config.namespace,
      sourceTopic: manifest.source_topic,
      incarnation: manifest.config.source_incarnation,
    });
    this.pool = new pg.Pool({ ...sessionConfig(this.databaseUrl, 'amendsctl showcase dashboard'), max: 2 });
    this.pool.on('error', () => {});
    this.feed = new DashboardFeed({
      db: this.pool,
      namespace: manifest.config.namespace,
      sourceTopic: manifest.source_topic,
      partitionCount: manifest.config.partitions,
      brokers: this.brokers,
      store: this.store,
    });
    this.feed.start();
  }

  async close(): Promise<void> {
    await this.dashboard.close();
    await this.feed?.stop();
    await this.pool?.end().catch(() => {});
  }
}
