/**
 * Every unknown commit outcome of a chaos run's workers, and how each was resolved
 * (docs/design.md#unknown-outcomes): the worker logs a `process_attempt` line with `observation: unknown` when a
 * batch's COMMIT may or may not have happened (the reply lost, the connection cut, the
 * primary gone mid-commit), and the outcome stays unknown until the partition row is read
 * again. What read it, in the same process's later lines:
 *
 *   observed    a `store_observed` line of the partition: the recovery read. Its epoch and
 *               frontier say whether the batch committed (frontier = last offset + 1, same
 *               epoch), did not (frontier = first offset) or the partition has another owner
 *   ride        the outage the failure began ended (`worker_outage_left`): the worker claimed
 *               its partitions afresh, and each claim read the partition row
 *   restart     the process ended first (a fault killed it): the next process claims from
 *               PostgreSQL's frontier
 *   unresolved  none of these: the log ends with the outcome still unknown
 *
 * Pure: it reads the lines each started process logged, in start order.
 */
import type { ChildLogLine } from '../io/process/child-process.js';

export type Resolution = 'observed' | 'ride' | 'restart' | 'unresolved';

export interface UnknownOutcome {
  process: string;
  /** 1 for the first start of the process, 2 after its first restart, … */
  start: number;
  time: string | null;
  partition: number;
  first_offset: number;
  last_offset: number;
  epoch: number;
  resolved_by: Resolution;
  /** For `observed`: committed, not committed, or another owner. */
  observed: 'committed' | 'not committed' | 'another owner' | null;
}

export interface UnknownOutcomeSummary {
  count: number;
  by: Record<Resolution, number>;
  items: UnknownOutcome[];
}

/** The unknown outcomes of one process name, from each start's lines (in start order). */
export function unknownOutcomes(process: string, starts: readonly (readonly ChildLogLine[])[]): UnknownOutcome[] {
  const found: UnknownOutcome[] = [];
  starts.forEach((lines, i) => {
    lines.forEach((line, at) => {
      if (line.msg !== 'process_attempt' || line.observation !== 'unknown') return;
      const partition = Number(line.partition);
      const first = Number(line.first_offset);
      const last = Number(line.last_offset);
      const epoch = Number(line.epoch);
      const base = {
        process,
        start: i + 1,
        time: typeof line.time === 'string' ? line.time : null,
        partition,
        first_offset: first,
        last_offset: last,
        epoch,
      };
      found.push({ ...base, ...resolution(lines.slice(at + 1), partition, first, last, epoch, i < starts.length - 1) });
    });
  });
  return found;
}

function resolution(
  after: readonly ChildLogLine[],
  partition: number,
  first: number,
  last: number,
  epoch: number,
  restarted: boolean,
): Pick<UnknownOutcome, 'resolved_by' | 'observed'> {
  for (const line of after) {
    if (line.msg === 'store_observed' && Number(line.partition) === partition) {
      const frontier = Number(line.frontier);
      const sameEpoch = Number(line.epoch) === epoch;
      const observed =
        sameEpoch && frontier === last + 1
          ? 'committed'
          : sameEpoch && frontier === first
            ? 'not committed'
            : 'another owner';
      return { resolved_by: 'observed', observed };
    }
    if (line.msg === 'worker_outage_left') return { resolved_by: 'ride', observed: null };
  }
  return { resolved_by: restarted ? 'restart' : 'unresolved', observed: null };
}

export function summarizeUnknownOutcomes(items: UnknownOutcome[]): UnknownOutcomeSummary {
  const by: Record<Resolution, number> = { observed: 0, ride: 0, restart: 0, unresolved: 0 };
  for (const item of items) by[item.resolved_by] += 1;
  return { count: items.length, by, items };
}
