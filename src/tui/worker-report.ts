/**
 * What the dashboard knows about one worker process's actors, whichever way it arrived:
 * a heartbeat row in PostgreSQL (other processes, transport.md Inspection) or this
 * process's own runtime summary (`amends worker --tui`, fed by xstate's inspection stream).
 * Both are turned into a `WorkerReport` here; nothing else reads their raw shapes.
 */
import type { StateValue } from 'xstate';
import type { GroupContext } from '../machines/group-machine.js';
import type { PartitionContext } from '../machines/partition-machine.js';
import { stateText } from '../machines/state-text.js';

/** One partition actor as reported by its worker. */
export interface ActorPartition {
  partition: number;
  state: string;
  epoch: number | null;
  frontier: number | null;
  attempts: number | null;
  budgetMs: number | null;
  operation: string | null;
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

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** A heartbeat row's `state` (worker.ts heartbeatState); tolerant of older or other roles' shapes. */
export function reportFromHeartbeat(row: {
  id: string;
  role: string;
  pid: number;
  heartbeat_age_ms: number;
  state: unknown;
}): WorkerReport {
  const state = (row.state ?? {}) as { group?: unknown; state?: unknown; partitions?: unknown; ended?: unknown };
  // Only a worker's partitions are source partitions; a view reports the output topic's.
  const partitions = row.role === 'worker' && Array.isArray(state.partitions) ? state.partitions : [];
  return {
    id: row.id,
    role: row.role,
    pid: row.pid,
    // A worker names its group actor's state; relay and view their own (active, standby, …).
    groupState: stringOrNull(state.group) ?? stringOrNull(state.state) ?? '?',
    heartbeatAgeMs: row.heartbeat_age_ms,
    local: false,
    partitions: partitions.flatMap((p: unknown) => {
      const r = (p ?? {}) as Record<string, unknown>;
      const partition = numberOrNull(r.partition);
      if (partition === null) return [];
      return [
        {
          partition,
          state: stringOrNull(r.state) ?? '?',
          epoch: numberOrNull(r.epoch),
          frontier: numberOrNull(r.frontier),
          attempts: numberOrNull(r.attempts),
          budgetMs: numberOrNull(r.budget_ms),
          operation: stringOrNull(r.operation),
          lastOutcome: stringOrNull(r.last_outcome),
          endReason: null,
        },
      ];
    }),
    ended: (row.role === 'worker' && Array.isArray(state.ended) ? state.ended : []).flatMap((e: unknown) => {
      const r = (e ?? {}) as Record<string, unknown>;
      const partition = numberOrNull(r.partition);
      const ending = stringOrNull(r.state);
      if (partition === null || (ending !== 'retired' && ending !== 'failed')) return [];
      const reason = stringOrNull(r.reason);
      return [
        {
          partition,
          state: ending,
          epoch: null,
          frontier: numberOrNull(r.frontier),
          attempts: null,
          budgetMs: null,
          operation: null,
          lastOutcome: null,
          endReason: reason === null ? null : `${reason}: ${stringOrNull(r.detail) ?? ''}`,
        },
      ];
    }),
  };
}

/** The in-process runtime's summary (worker-runtime.ts WorkerSummary), shaped like a heartbeat. */
export interface LocalSummary {
  state: StateValue;
  context: Pick<GroupContext, 'partitions'>;
  partitions: { state: StateValue; context: PartitionContext }[];
}

export function reportFromSummary(identity: { id: string; pid: number }, summary: LocalSummary): WorkerReport {
  return {
    id: identity.id,
    role: 'worker',
    pid: identity.pid,
    groupState: stateText(summary.state),
    heartbeatAgeMs: null,
    local: true,
    partitions: summary.partitions.map(({ state, context: c }) => ({
      partition: c.partition,
      state: stateText(state),
      epoch: c.token?.epoch ?? null,
      frontier: c.frontier,
      attempts: c.attempts,
      budgetMs: c.budgetMs,
      operation: c.operation,
      lastOutcome: c.lastOutcome,
      endReason: null,
    })),
    ended: summary.context.partitions.flatMap((entry) =>
      entry.phase === 'retired' || entry.phase === 'failed'
        ? [
            {
              partition: entry.partition,
              state: entry.phase,
              epoch: null,
              frontier: entry.frontier,
              attempts: null,
              budgetMs: null,
              operation: null,
              lastOutcome: null,
              endReason: entry.end === null ? null : `${entry.end.reason}: ${entry.end.detail}`,
            },
          ]
        : [],
    ),
  };
}
