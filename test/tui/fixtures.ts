/** Shared builders for the dashboard tests: a header, partitions in each state, a store with a fake clock. */
import { setTimeout as sleep } from 'node:timers/promises';
import { blankPartition, type DashboardHeader, type PartitionView } from '../../src/tui/dashboard-model.js';
import { DashboardStore, type StoreSample } from '../../src/tui/dashboard-store.js';
import type { WorkerReport } from '../../src/tui/worker-report.js';

export const header: DashboardHeader = {
  mode: 'tui',
  namespace: 'ns-test',
  sourceTopic: 'topic-test',
  incarnation: 'kafka:abc123',
  brokers: '127.0.0.1:19092',
  database: '127.0.0.1:15432/amends',
  logFile: null,
};

export function partition(p: number, patch: Partial<PartitionView> = {}): PartitionView {
  return { ...blankPartition(p), ...patch };
}

/** The lifecycle states of worker.md §4 as the statechart writes them. */
export const lifecycleStates = [
  'unassigned',
  'claiming.claim',
  'seeking.observeStore',
  'processing.idle',
  'processing.deciding.committing',
  'processing.deciding.recovering',
  'retired',
  'failed',
] as const;

export function report(id: string, patch: Partial<WorkerReport> = {}): WorkerReport {
  return {
    id,
    role: 'worker',
    pid: 100,
    groupState: 'running.polling',
    heartbeatAgeMs: 300,
    local: false,
    partitions: [],
    ended: [],
    ...patch,
  };
}

export function actor(p: number, state: string, patch: Partial<WorkerReport['partitions'][number]> = {}) {
  return {
    partition: p,
    state,
    epoch: 1,
    frontier: 0,
    attempts: 0,
    operation: null,
    deadlineInMs: null,
    lastOutcome: null,
    endReason: null,
    ...patch,
  };
}

export function sample(patch: Partial<StoreSample> = {}): StoreSample {
  return {
    partitions: [],
    ends: null,
    counts: { APPLIED: 0 },
    quarantine: 0,
    outbox: { pending: 0, published: 0 },
    viewLag: null,
    workers: [],
    recent: [],
    ...patch,
  };
}

/** A store on a clock the test moves (`clock.ms += …`). */
export function storeWithClock(partitionCount = 2, timeline = false) {
  const clock = { ms: 1_000_000 };
  const store = new DashboardStore({ header, partitionCount, now: () => clock.ms, timeline });
  return { store, clock };
}

export const tick = (ms = 20) => sleep(ms);
