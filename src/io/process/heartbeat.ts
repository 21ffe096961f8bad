/**
 * The heartbeat row's `state` (docs/design.md#inspection), one codec for every side: the worker
 * encodes its runtime summary here, and the dashboard, the showcase's probe and the tests
 * decode rows here, instead of each re-parsing `Record<string, unknown>` by hand. Decoding is
 * tolerant: a row written by an older build, or by another role, gives nulls and empty
 * lists, never an exception (a heartbeat is only ever information, never a decision).
 */

import { stateText } from '../../machines/state-text.js';
import type { WorkerSummary } from '../../machines/worker-summary.js';

/** One live partition actor of a worker. */
export interface PartitionBeat {
  partition: number;
  state: string;
  epoch: number | null;
  frontier: number | null;
  attempts: number | null;
  /** The store operation in flight (claim, seek, decide), if any. */
  operation: string | null;
  /** Time left of the operation's shared budget (docs/design.md#unknown-outcomes) when the beat was written. */
  deadline_in_ms: number | null;
  last_outcome: string | null;
}

/** A partition whose actor ended in the current generation (from the group's own record). */
export interface EndedBeat {
  partition: number;
  state: 'retired' | 'failed';
  frontier: number | null;
  reason: string | null;
  detail: string | null;
}

export interface WorkerBeat {
  /** The group actor's state, e.g. `running.polling`. */
  group: string;
  generation: number | null;
  partitions: PartitionBeat[];
  ended: EndedBeat[];
}

/** The worker's beat from its runtime summary at `nowMs` (the clock of the deadlines). */
export function encodeWorkerBeat(summary: WorkerSummary, nowMs: number): WorkerBeat {
  return {
    group: stateText(summary.state),
    generation: summary.context.generation,
    // The group stops a partition actor as soon as it ends, so its ending is reported from
    // the group's own record: other processes' dashboards show it, with the reason.
    ended: summary.context.partitions.flatMap((e) =>
      e.phase === 'retired' || e.phase === 'failed'
        ? [
            {
              partition: e.partition,
              state: e.phase,
              frontier: e.frontier,
              reason: e.end?.reason ?? null,
              detail: e.end?.detail ?? null,
            },
          ]
        : [],
    ),
    partitions: summary.partitions.map(({ state, context: c, deadlineAtMs }) => ({
      partition: c.partition,
      state: stateText(state),
      epoch: c.token?.epoch ?? null,
      frontier: c.frontier,
      attempts: c.attempts,
      operation: c.operation,
      // A summary built by hand (tests) may carry no deadline at all.
      deadline_in_ms: typeof deadlineAtMs === 'number' ? deadlineAtMs - nowMs : null,
      last_outcome: c.lastOutcome ?? null,
    })),
  };
}

/** A worker's beat from a row's `state`; other roles' and malformed entries give empty lists. */
export function decodeWorkerBeat(state: unknown): WorkerBeat {
  const s = record(state);
  return {
    group: stringOrNull(s.group) ?? '?',
    generation: numberOrNull(s.generation),
    partitions: list(s.partitions).flatMap(decodePartition),
    ended: list(s.ended).flatMap(decodeEnded),
  };
}

/** What any role says it is doing: a worker's group state, a relay's or view's own state. */
export function decodeProcessState(state: unknown): string | null {
  const s = record(state);
  return stringOrNull(s.group) ?? stringOrNull(s.state);
}

function decodePartition(entry: unknown): PartitionBeat[] {
  const r = record(entry);
  const partition = numberOrNull(r.partition);
  if (partition === null) return [];
  return [
    {
      partition,
      state: stringOrNull(r.state) ?? '?',
      epoch: numberOrNull(r.epoch),
      frontier: numberOrNull(r.frontier),
      attempts: numberOrNull(r.attempts),
      operation: stringOrNull(r.operation),
      deadline_in_ms: numberOrNull(r.deadline_in_ms),
      last_outcome: stringOrNull(r.last_outcome),
    },
  ];
}

function decodeEnded(entry: unknown): EndedBeat[] {
  const r = record(entry);
  const partition = numberOrNull(r.partition);
  const state = r.state;
  if (partition === null || (state !== 'retired' && state !== 'failed')) return [];
  return [
    {
      partition,
      state,
      frontier: numberOrNull(r.frontier),
      reason: stringOrNull(r.reason),
      detail: stringOrNull(r.detail),
    },
  ];
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
