/**
 * What the dashboard knows about one worker process's actors, whichever way it arrived:
 * a heartbeat row in PostgreSQL (other processes, docs/design.md#inspection) or this
 * process's own runtime summary (`amends worker --tui`, fed by xstate's inspection stream).
 * Both go through the heartbeat codec (process/heartbeat.ts) into a `WorkerReport` here.
 */

import { decodeProcessState, decodeWorkerBeat, encodeWorkerBeat, type WorkerBeat } from '../io/process/heartbeat.js';
import type { WorkerSummary } from '../machines/worker-summary.js';

/** One partition actor as reported by its worker. */
export interface ActorPartition {
  partition: number;
  state: string;
  epoch: number | null;
  frontier: number | null;
  attempts: number | null;
  operation: string | null;
  /** Time left of the operation's budget when this report was made (docs/design.md#unknown-outcomes). */
  deadlineInMs: number | null;
  lastOutcome: string | null;
  endReason: string | null;
}

export interface WorkerReport {
  id: string;
  role: string;
  pid: number;
  groupState: string;
  /** null for the in-process worker (it is always current). */
  heartbeatAgeMs: number | null;
  local: boolean;
  /** The live partition actors. */
  partitions: ActorPartition[];
  /** Partitions whose actor ended in the current generation (from the group's own record). */
  ended: ActorPartition[];
}

/** A heartbeat row; only a worker's partitions are source partitions (a view reports the output topic's). */
export function reportFromHeartbeat(row: {
  id: string;
  role: string;
  pid: number;
  heartbeat_age_ms: number;
  state: unknown;
}): WorkerReport {
  const beat = row.role === 'worker' ? decodeWorkerBeat(row.state) : { partitions: [], ended: [] };
  return {
    ...reportParts(beat, row.heartbeat_age_ms),
    ...{ id: row.id, role: row.role, pid: row.pid, heartbeatAgeMs: row.heartbeat_age_ms, local: false },
    // A worker names its group actor's state; relay and view their own (active, standby, …).
    groupState: decodeProcessState(row.state) ?? '?',
  };
}

/** The in-process runtime's summary (worker-runtime.ts), encoded as its heartbeat would be. */
export type LocalSummary = WorkerSummary;

export function reportFromSummary(
  identity: { id: string; pid: number },
  summary: LocalSummary,
  nowMs: number = Date.now(),
): WorkerReport {
  const beat = encodeWorkerBeat(summary, nowMs);
  return {
    ...reportParts(beat, 0),
    ...{ id: identity.id, role: 'worker', pid: identity.pid, heartbeatAgeMs: null, local: true },
    groupState: beat.group,
  };
}

/** The beat's partitions and endings; its deadlines aged by `ageMs` (the heartbeat's age). */
function reportParts(beat: Pick<WorkerBeat, 'partitions' | 'ended'>, ageMs: number) {
  return {
    partitions: beat.partitions.map(
      (p): ActorPartition => ({
        ...{ partition: p.partition, state: p.state, epoch: p.epoch, frontier: p.frontier, attempts: p.attempts },
        operation: p.operation,
        deadlineInMs: p.deadline_in_ms === null ? null : p.deadline_in_ms - ageMs,
        lastOutcome: p.last_outcome,
        endReason: null,
      }),
    ),
    ended: beat.ended.map(
      (e): ActorPartition => ({
        ...{ partition: e.partition, state: e.state, epoch: null, frontier: e.frontier, attempts: null },
        ...{ operation: null, deadlineInMs: null, lastOutcome: null },
        endReason: e.reason === null ? null : `${e.reason}: ${e.detail ?? ''}`,
      }),
    ),
  };
}
