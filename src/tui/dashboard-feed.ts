/**
 * The dashboard's PostgreSQL and broker feed (`amends tui`, and the counts of
 * `amends worker --tui`): every `pollIntervalMs` one `inspectStore` (the same aggregate
 * statements as `amendsctl inspect`) and one ListOffsets of the read-committed ends, pushed
 * into the store. The components never see this module (docs/design.md#conventions: the UI reads a store).
 *
 * A failed poll is shown as the feed's error line and retried at the next tick; the broker
 * part is optional, as in inspect: unreachable means `end` and `lag` are unknown.
 */

import { KafkaAdmin } from '../io/kafka/kafka-admin.js';
import { inspectStore, type StoreInspection } from '../io/store/inspect-queries.js';
import type { Queryable } from '../io/store/postgres.js';
import { errorMessage } from '../kernel/error-message.js';
import type { DashboardStore, StoreSample } from './dashboard-store.js';
import { reportFromHeartbeat } from './worker-report.js';

export const pollIntervalMs = 750;
/** The recent decisions asked for: a few more than any terminal shows. */
export const feedRecentDecisions = 30;
/** The broker is asked briefly each poll: a slow broker must not stall the database part. */
const brokerTimeoutMs = 2_000;
/** After a broker failure, the admin client is recreated no sooner than this. */
const brokerRetryMs = 5_000;

export interface DashboardFeedOptions {
  db: Queryable;
  namespace: string;
  sourceTopic: string;
  partitionCount: number;
  /** Bootstrap servers for the ends; null leaves `end` and `lag` unknown. */
  brokers: string | null;
  store: DashboardStore;
  intervalMs?: number;
}

/** The view part of an inspection, when the transport has bound an output topic (docs/design.md#transport). */
interface ViewPart {
  output_topic: string;
  partitions: { partition: number; frontier: number }[];
}

function viewOf(inspection: StoreInspection): ViewPart | null {
  // Read defensively: the view arrives with the transport, and is null without a binding.
  return (inspection as { view?: ViewPart | null }).view ?? null;
}

/** The view's total lag: Σ (output end − view frontier); null without a view or output ends. */
export function viewLagOf(view: ViewPart | null, outputEnds: ReadonlyMap<number, number> | null): number | null {
  if (view === null || outputEnds === null) return null;
  let lag = 0;
  for (const p of view.partitions) lag += Math.max(0, (outputEnds.get(p.partition) ?? p.frontier) - p.frontier);
  return lag;
}

/** One inspection and the broker's ends, as the store's sample (pure). */
export function sampleFromInspection(
  inspection: StoreInspection,
  ends: ReadonlyMap<number, number> | null,
  outputEnds: ReadonlyMap<number, number> | null = null,
): StoreSample {
  return {
    partitions: inspection.partitions.map((p) => ({
      partition: p.partition,
      epoch: p.epoch,
      frontier: p.frontier,
      configRevision: p.config_revision,
      owner: p.owner,
      lastWorkCounts: p.last_work?.counts ?? null,
    })),
    ends,
    counts: inspection.counts,
    quarantine: inspection.quarantine,
    outbox: inspection.outbox,
    viewLag: viewLagOf(viewOf(inspection), outputEnds),
    workers: inspection.workers.map(reportFromHeartbeat),
    recent: inspection.recent,
  };
}

export class DashboardFeed {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private admin: KafkaAdmin | null = null;
  private brokerFailedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: DashboardFeedOptions) {}

  start(): void {
    const tick = () => {
      this.running = this.pollOnce().finally(() => {
        if (!this.stopped) {
          this.timer = setTimeout(tick, this.options.intervalMs ?? pollIntervalMs);
          this.timer.unref();
        }
      });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    this.admin?.close();
    this.admin = null;
  }

  /** One poll; never throws (a failure becomes the store's feed error). */
  async pollOnce(): Promise<void> {
    const { db, namespace, store } = this.options;
    try {
      const [inspection, ends] = await Promise.all([
        inspectStore(db, namespace, feedRecentDecisions),
        this.brokerEnds(this.options.sourceTopic, this.options.partitionCount),
      ]);
      const view = viewOf(inspection);
      const outputEnds =
        view === null || view.partitions.length === 0
          ? null
          : await this.brokerEnds(view.output_topic, Math.max(...view.partitions.map((p) => p.partition)) + 1);
      if (!this.stopped) store.applyStoreSample(sampleFromInspection(inspection, ends, outputEnds));
    } catch (error) {
      if (!this.stopped) store.setFeedError(`PostgreSQL: ${errorMessage(error)}`);
    }
  }

  private async brokerEnds(topic: string, partitionCount: number): Promise<Map<number, number> | null> {
    const { brokers } = this.options;
    if (brokers === null || Date.now() - this.brokerFailedAt < brokerRetryMs) return null;
    try {
      this.admin ??= KafkaAdmin.open(brokers, `amends-tui-${process.pid}`);
      const partitions = Array.from({ length: partitionCount }, (_, p) => p);
      return await this.admin.listOffsets(topic, partitions, 'read-committed-end', brokerTimeoutMs);
    } catch {
      this.brokerFailedAt = Date.now();
      this.admin?.close();
      this.admin = null;
      return null;
    }
  }
}
