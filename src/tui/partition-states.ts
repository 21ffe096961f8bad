/**
 * One row per partition from what the workers report and what PostgreSQL and the broker
 * say (pure: the store calls it on every change).
 *
 * A retired or failed partition actor is stopped at once by its group (group-machine.ts
 * recordEnded), so it is reported from the group's record of endings (`ended`, with the
 * reason), in heartbeats as in-process. Failing that (an older heartbeat, a worker killed
 * before it beat again), a partition that a worker listed before and no longer lists, or whose
 * recorded owner has stopped, is shown as that ending ("retired", or "failed" when the
 * owner's group failed).
 */
import { blankPartition, type PartitionView } from './dashboard-model.js';
import type { ActorPartition, WorkerReport } from './worker-report.js';

/** A heartbeat older than this (a few beats, below the 6 s session timeout) marks its worker stale. */
export const heartbeatStaleMs = 5_000;

export interface StorePartitionRow {
  partition: number;
  epoch: number;
  frontier: number;
  /** The row's configuration revision: the newest, raised on every row by config-revise. */
  configRevision: number;
  owner: string | null;
  /** The last committed work's outcome counts, e.g. {"APPLIED":1}. */
  lastWorkCounts: Record<string, number> | null;
}

export interface PartitionInputs {
  partitionCount: number;
  reports: readonly WorkerReport[];
  /** The partitions rows of the last PostgreSQL poll; null until one has arrived. */
  storeRows: readonly StorePartitionRow[] | null;
  ends: ReadonlyMap<number, number> | null;
  /** The worker that last listed each partition, remembered across samples. */
  lastListedBy: ReadonlyMap<number, string>;
  rates: ReadonlyMap<number, number | null>;
}

const finalGroupStates = new Set(['stopped', 'failed']);

export function isStale(report: WorkerReport): boolean {
  return report.heartbeatAgeMs !== null && report.heartbeatAgeMs > heartbeatStaleMs;
}

/** Which worker's actor speaks for a partition: the local one, then the freshest heartbeat. */
function listing(
  reports: readonly WorkerReport[],
  partition: number,
): { report: WorkerReport; actor: ActorPartition } | null {
  const ordered = [...reports].sort(
    (a, b) => Number(b.local) - Number(a.local) || (a.heartbeatAgeMs ?? 0) - (b.heartbeatAgeMs ?? 0),
  );
  for (const report of ordered) {
    if (finalGroupStates.has(report.groupState)) continue;
    const actor = report.partitions.find((p) => p.partition === partition);
    if (actor) return { report, actor };
  }
  return null;
}

/** The worker that reports this partition's actor as ended: the local one, then the freshest. */
function endingReport(
  reports: readonly WorkerReport[],
  partition: number,
): { report: WorkerReport; ended: ActorPartition } | null {
  const ordered = [...reports].sort(
    (a, b) => Number(b.local) - Number(a.local) || (a.heartbeatAgeMs ?? 0) - (b.heartbeatAgeMs ?? 0),
  );
  for (const report of ordered) {
    const ended = report.ended.find((e) => e.partition === partition);
    if (ended) return { report, ended };
  }
  return null;
}

function endingOf(report: WorkerReport): string {
  return report.groupState === 'failed' ? 'failed' : 'retired';
}

function outcomeOfCounts(counts: Record<string, number> | null): string | null {
  if (counts === null) return null;
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([o, n]) => `${o}:${n}`);
  return parts.length === 0 ? null : parts.join(' ');
}

function maxOrNull(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

export function derivePartitions(inputs: PartitionInputs): PartitionView[] {
  const storeRows = inputs.storeRows ?? [];
  const byPartition = new Map(storeRows.map((r) => [r.partition, r]));
  const byId = new Map(inputs.reports.map((r) => [r.id, r]));
  const count = Math.max(inputs.partitionCount, ...storeRows.map((r) => r.partition + 1));
  return Array.from({ length: count }, (_, partition) => {
    const view = blankPartition(partition);
    const row = byPartition.get(partition);
    const listed = listing(inputs.reports, partition);
    if (listed) {
      const { report, actor } = listed;
      // The marker goes first: a narrow state column truncates the end of the text.
      view.state = isStale(report) ? `(stale) ${actor.state}` : actor.state;
      view.owner = report.id;
      view.epoch = actor.epoch;
      view.frontier = actor.frontier;
      view.attempts = actor.attempts;
      view.operation = actor.operation;
      view.deadlineInMs = actor.deadlineInMs;
      view.lastOutcome = actor.lastOutcome;
    } else {
      const ending = endingReport(inputs.reports, partition);
      const lastId = inputs.lastListedBy.get(partition);
      const last = lastId === undefined ? undefined : byId.get(lastId);
      const recorded = row?.owner ? byId.get(row.owner) : undefined;
      if (ending) {
        view.state = ending.ended.state;
        view.owner = ending.report.id;
        view.endReason = ending.ended.endReason;
      } else if (last) {
        view.state = endingOf(last);
        view.owner = last.id;
      } else if (recorded && finalGroupStates.has(recorded.groupState)) {
        view.state = endingOf(recorded);
        view.owner = recorded.id;
      }
    }
    if (row) {
      view.epoch = maxOrNull(view.epoch, row.epoch);
      view.frontier = maxOrNull(view.frontier, row.frontier);
      view.owner ??= row.owner;
      view.lastOutcome ??= outcomeOfCounts(row.lastWorkCounts);
    }
    // config-revise makes every partition's row, so one without a row has never been revised.
    if (inputs.storeRows !== null) view.configRevision = row?.configRevision ?? 1;
    const end = inputs.ends?.get(partition) ?? null;
    view.end = end;
    view.lag = end === null ? null : Math.max(0, end - (view.frontier ?? 0));
    view.recordsPerSecond = inputs.rates.get(partition) ?? null;
    return view;
  });
}
