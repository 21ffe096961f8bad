/**
 * The dashboard's store: the feeds push samples in, the components read snapshots out
 * through `useSyncExternalStore` (docs/design.md#ink-and-meow). Subscribers are told at most
 * once per `flushIntervalMs`, however often the feeds push, so ink redraws at most ~10 times
 * a second. Key presses (selection, help) are flushed at once: they are rare and the user
 * is waiting for them.
 *
 *   DB feed ──applyStoreSample──┐
 *   inspection feed ─applyLocal─┼─▶ derive (partition-states.ts) ─▶ snapshot ─(≤ 10/s)─▶ ink
 *   keys ──select / toggleHelp──┘
 */
import {
  type DashboardData,
  type DashboardHeader,
  type DashboardSnapshot,
  emptyDashboardData,
  type RecentDecisionView,
  recentDecisionsMax,
  timelineEntriesMax,
} from './dashboard-model.js';
import { derivePartitions, isStale, type StorePartitionRow } from './partition-states.js';
import type { WorkerReport } from './worker-report.js';

export const flushIntervalMs = 100;
/** Records/s is the frontier's progress over this window. */
export const rateWindowMs = 5_000;
/** At most this many frontier samples per partition (a limit on everything, docs/design.md#conventions). */
const rateSamplesMax = 64;
/** A rate needs samples at least this far apart. */
const rateMinSpanMs = 400;

/** One poll of PostgreSQL (and the broker), already decoded by the feed. */
export interface StoreSample {
  partitions: StorePartitionRow[];
  /** Read-committed ends per partition; null when the broker is unreachable. */
  ends: ReadonlyMap<number, number> | null;
  counts: Record<string, number>;
  quarantine: number;
  outbox: { pending: number; published: number } | null;
  viewLag: number | null;
  workers: WorkerReport[];
  recent: RecentDecisionView[];
}

export interface DashboardStoreOptions {
  header: DashboardHeader;
  /** The manifest's partition count: one row each, even before anything is known. */
  partitionCount: number;
  /** Milliseconds; Date.now by default (tests pass their own). */
  now?: () => number;
  /** Show the fault timeline section (the showcase; `worker --tui` shows its actors' events). */
  timeline?: boolean;
}

export class DashboardStore {
  private snapshot: DashboardSnapshot;
  private readonly listeners = new Set<() => void>();
  private readonly now: () => number;
  private readonly startedAt: number;
  private readonly partitionCount: number;
  private timer: NodeJS.Timeout | undefined;
  private lastFlushAt = Number.NEGATIVE_INFINITY;
  private pending: DashboardSnapshot | null = null;

  private sample: StoreSample | null = null;
  private local: WorkerReport | null = null;
  private readonly lastListedBy = new Map<number, string>();
  private readonly frontierSamples = new Map<number, { at: number; frontier: number }[]>();
  private timeline: DashboardData['timeline'];

  constructor(options: DashboardStoreOptions) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.partitionCount = options.partitionCount;
    this.timeline = options.timeline ? [] : null;
    const data = emptyDashboardData(options.header);
    data.timeline = this.timeline;
    this.snapshot = { data, ui: { selected: null, help: false } };
    this.snapshot.data.partitions = this.derive().partitions;
  }

  // --- for useSyncExternalStore ------------------------------------------------------

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): DashboardSnapshot => this.snapshot;

  // --- feeds ---------------------------------------------------------------------------

  applyStoreSample(sample: StoreSample): void {
    this.sample = sample;
    this.recordFrontiers(sample.partitions.map((p) => [p.partition, p.frontier]));
    this.update({ feedError: null });
  }

  /** The in-process worker (worker --tui), from its runtime summary. */
  applyLocal(report: WorkerReport): void {
    this.local = report;
    this.recordFrontiers(report.partitions.flatMap((p) => (p.frontier === null ? [] : [[p.partition, p.frontier]])));
    this.update({});
  }

  setFeedError(message: string): void {
    this.update({ feedError: message });
  }

  setHeader(header: Partial<DashboardHeader>): void {
    this.update({ header: { ...this.current().data.header, ...header } });
  }

  addTimeline(text: string): void {
    if (this.timeline === null) return;
    this.timeline = [...this.timeline, { atMs: this.now() - this.startedAt, text }].slice(-timelineEntriesMax);
    this.update({});
  }

  // --- keys ----------------------------------------------------------------------------

  /** Moves the selection by `delta` partitions (from none: the first or the last). */
  moveSelection(delta: 1 | -1): void {
    const { data, ui } = this.current();
    const count = data.partitions.length;
    if (count === 0) return;
    const index = data.partitions.findIndex((p) => p.partition === ui.selected);
    const next = index < 0 ? (delta > 0 ? 0 : count - 1) : Math.min(count - 1, Math.max(0, index + delta));
    this.setUi({ selected: data.partitions[next]?.partition ?? null });
  }

  clearSelection(): void {
    this.setUi({ selected: null });
  }

  toggleHelp(): void {
    this.setUi({ help: !this.current().ui.help });
  }

  /** Publishes what is pending now (tests, and the final frame before exit). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === null) return;
    this.snapshot = this.pending;
    this.pending = null;
    this.lastFlushAt = this.now();
    for (const listener of [...this.listeners]) listener();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.listeners.clear();
  }

  // --- internals -----------------------------------------------------------------------

  private current(): DashboardSnapshot {
    return this.pending ?? this.snapshot;
  }

  private setUi(ui: Partial<DashboardSnapshot['ui']>): void {
    const current = this.current();
    this.pending = { data: current.data, ui: { ...current.ui, ...ui } };
    this.flush();
  }

  private update(patch: Partial<DashboardData>): void {
    const current = this.current();
    const merged = { ...current.data, ...patch };
    this.pending = { data: { ...merged, ...this.derive(), loaded: true }, ui: current.ui };
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, flushIntervalMs - (this.now() - this.lastFlushAt));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
    this.timer.unref?.();
  }

  private reports(): WorkerReport[] {
    const remote = this.sample?.workers ?? [];
    if (this.local === null) return [...remote];
    const localId = this.local.id;
    return [this.local, ...remote.filter((w) => w.id !== localId)];
  }

  private derive(): Pick<
    DashboardData,
    'partitions' | 'workers' | 'counts' | 'quarantine' | 'outbox' | 'viewLag' | 'recent' | 'timeline'
  > {
    const reports = this.reports();
    const partitions = derivePartitions({
      partitionCount: this.partitionCount,
      reports,
      storeRows: this.sample?.partitions ?? null,
      ends: this.sample?.ends ?? null,
      lastListedBy: this.lastListedBy,
      rates: this.rates(),
    });
    for (const report of reports) {
      if (isStale(report) || report.groupState === 'stopped' || report.groupState === 'failed') continue;
      for (const p of report.partitions) this.lastListedBy.set(p.partition, report.id);
    }
    return {
      partitions,
      // Workers first (they own partitions), then relay and view; by id within a role.
      workers: [...reports].sort(byRoleThenId).map((r) => ({
        id: r.id,
        role: r.role,
        pid: r.pid,
        groupState: r.groupState,
        heartbeatAgeMs: r.heartbeatAgeMs,
        local: r.local,
      })),
      counts: this.sample?.counts ?? {},
      quarantine: this.sample?.quarantine ?? null,
      outbox: this.sample?.outbox ?? null,
      viewLag: this.sample?.viewLag ?? null,
      recent: (this.sample?.recent ?? []).slice(-recentDecisionsMax),
      timeline: this.timeline,
    };
  }

  private recordFrontiers(frontiers: [number, number][]): void {
    const at = this.now();
    for (const [partition, frontier] of frontiers) {
      const samples = this.frontierSamples.get(partition) ?? [];
      const last = samples[samples.length - 1];
      if (last && last.at === at) last.frontier = Math.max(last.frontier, frontier);
      else samples.push({ at, frontier });
      while (samples.length > rateSamplesMax || (samples[0] && samples[0].at < at - rateWindowMs)) samples.shift();
      this.frontierSamples.set(partition, samples);
    }
  }

  private rates(): Map<number, number | null> {
    const rates = new Map<number, number | null>();
    for (const [partition, samples] of this.frontierSamples) {
      const first = samples[0];
      const last = samples[samples.length - 1];
      if (!first || !last || last.at - first.at < rateMinSpanMs) {
        rates.set(partition, null);
        continue;
      }
      rates.set(partition, Math.max(0, ((last.frontier - first.frontier) * 1000) / (last.at - first.at)));
    }
    return rates;
  }
}

const roleOrder = ['worker', 'relay', 'view'];
function byRoleThenId(a: WorkerReport, b: WorkerReport): number {
  const rank = (r: WorkerReport) => (roleOrder.includes(r.role) ? roleOrder.indexOf(r.role) : roleOrder.length);
  return rank(a) - rank(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
