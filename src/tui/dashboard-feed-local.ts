/**
 * The in-process feed of `amends worker --tui` (docs/design.md#dashboard: a worker in the same process is
 * shown from xstate's inspection stream directly). The runtime's `inspect` callback runs
 * inside xstate's transitions, so it only notes that something changed (and records the
 * events worth a timeline line); the summary is read outside the transition, at most every
 * `localFeedIntervalMs`, and pushed into the store.
 */
import type { InspectionEvent } from 'xstate';
import { stateText } from '../machines/state-text.js';
import type { DashboardStore } from './dashboard-store.js';
import { type LocalSummary, reportFromSummary } from './worker-report.js';

export const localFeedIntervalMs = 100;

/** Group events shown on the timeline (the rest is routine). */
const timelineEvents = new Set(['PARTITIONS_ASSIGNED', 'PARTITIONS_REVOKED', 'STOP', 'PARTITION_ENDED']);
/** Partition states too frequent to be worth a timeline line. */
const routineStates = new Set(['processing.idle', 'processing.deciding.committing']);

export interface LocalFeed {
  /** Give this to createWorkerRuntime({ inspect }). */
  inspect(event: InspectionEvent): void;
  start(summary: () => LocalSummary): void;
  /** Pushes the final summary and stops. */
  stop(): void;
}

function eventText(event: Record<string, unknown>): string {
  switch (event.type) {
    case 'PARTITIONS_ASSIGNED':
      return `assigned partitions [${(event.partitions as number[] | undefined)?.join(', ') ?? ''}]`;
    case 'PARTITIONS_REVOKED':
      return event.lost === true ? 'assignment lost' : 'partitions revoked';
    case 'STOP':
      return `stop (${String(event.reason ?? '')})`;
    case 'PARTITION_ENDED': {
      const end = event.end as { status?: string; reason?: string } | undefined;
      return `p${String(event.partition)} ${end?.status ?? 'ended'} (${end?.reason ?? '?'})`;
    }
    default:
      return String(event.type);
  }
}

export function createLocalFeed(store: DashboardStore, identity: { id: string; pid: number }): LocalFeed {
  let dirty = true;
  let timer: NodeJS.Timeout | undefined;
  let read: (() => LocalSummary) | undefined;
  const partitionStates = new Map<string, string>();
  // A deadline counts down with no event: while one runs, every tick pushes.
  let counting = false;
  const push = () => {
    if ((!dirty && !counting) || read === undefined) return;
    dirty = false;
    const report = reportFromSummary(identity, read());
    counting = report.partitions.some((p) => p.deadlineInMs !== null);
    store.applyLocal(report);
  };
  return {
    inspect(event) {
      dirty = true;
      if (event.type === '@xstate.event' && timelineEvents.has(event.event.type)) {
        store.addTimeline(eventText(event.event as Record<string, unknown>));
      } else if (event.type === '@xstate.snapshot') {
        const id = (event.actorRef as { id?: string }).id ?? '';
        if (!id.startsWith('partition-')) return;
        const value = (event.snapshot as { value?: unknown }).value;
        if (value === undefined) return;
        const state = stateText(value);
        if (partitionStates.get(id) === state) return;
        partitionStates.set(id, state);
        if (!routineStates.has(state)) store.addTimeline(`${id.replace('partition-', 'p')} → ${state}`);
      }
    },
    start(summary) {
      read = summary;
      push();
      timer = setInterval(push, localFeedIntervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      dirty = true;
      push();
    },
  };
}
