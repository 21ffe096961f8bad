/**
 * `--as-of P:O[,P:O…]` and `--as-of-time T` of `explain` and `balances` (docs/design.md#sql-read-api):
 * which decisions an answer includes, turned into one bound per partition (a `through` array of
 * the read API) before anything is read, so that every statement of a command answers the same
 * question.
 *
 * - neither: what is decided now, fixed as each partition's frontier − 1 when the command starts;
 * - `--as-of`: the named partitions up to and including the named offsets (each must be decided:
 *   below its frontier), the partitions not named as they are now;
 * - `--as-of-time`: per partition, the decisions committed at or before T (positions_at).
 */
import {
  formatThrough,
  isZonedTime,
  parsePositions,
  positionBeyond,
  type Through,
  throughOf,
} from '../domain/source-position.js';
import type { Queryable } from '../io/store/postgres.js';
import { positionsAt, readFrontiers } from '../io/store/read-api.js';
import { invalidInput, usageError } from '../kernel/amends-error.js';

export const asOfFlags = {
  asOf: { type: 'string' },
  asOfTime: { type: 'string' },
} as const;

/** The flags' lines of a command's help, indented to `width`. */
export function asOfFlagsHelp(width: number): string {
  const flag = (name: string, text: string) => `    ${name.padEnd(width)}${text}`;
  return [
    flag('--as-of P:O', 'as of source position: partition P up to and including offset O'),
    flag('', '(several: 0:7,1:12; partitions not named: as decided now)'),
    flag('--as-of-time T', 'as of the decisions committed at or before T (e.g. 2026-03-05T10:00:00Z)'),
  ].join('\n');
}

export type AsOfRequest = { kind: 'now' } | { kind: 'position'; text: string } | { kind: 'time'; at: string };

export function asOfRequest(flags: { asOf?: string | undefined; asOfTime?: string | undefined }): AsOfRequest {
  const { asOf, asOfTime } = flags;
  if (asOf !== undefined && asOfTime !== undefined) throw usageError('--as-of and --as-of-time exclude each other');
  if (asOf !== undefined) return { kind: 'position', text: asOf };
  if (asOfTime !== undefined) {
    if (!isZonedTime(asOfTime)) {
      throw usageError(
        `--as-of-time ${JSON.stringify(asOfTime)} is not a time with a zone, e.g. 2026-03-05T10:00:00Z or 2026-03-05T11:00:00+01:00`,
      );
    }
    return { kind: 'time', at: asOfTime };
  }
  return { kind: 'now' };
}

export interface ResolvedAsOf {
  kind: AsOfRequest['kind'];
  /** The time asked for (`--as-of-time`), else null. */
  time: string | null;
  /** Per partition, the last included offset (-1: none). */
  through: number[];
}

/** Reads the frontiers (and for a time, the positions) and fixes the bound of every partition. */
export async function resolveAsOf(
  db: Queryable,
  api: string,
  namespace: string,
  request: AsOfRequest,
): Promise<ResolvedAsOf> {
  const frontiers = await readFrontiers(db, api, namespace);
  if (request.kind === 'time') {
    return { kind: 'time', time: request.at, through: await positionsAt(db, api, namespace, request.at) };
  }
  if (request.kind === 'now') return { kind: 'now', time: null, through: throughOf(new Map(), frontiers) };
  const parsed = parsePositions(request.text, frontiers.length);
  if (!parsed.ok) throw usageError(`--as-of ${request.text}: ${parsed.reason}`);
  const beyond = positionBeyond(parsed.positions, frontiers);
  if (beyond !== undefined) {
    const decided =
      beyond.frontier === 0 ? 'nothing of it is decided yet' : `offsets 0…${beyond.frontier - 1} are decided`;
    throw invalidInput(
      `position ${beyond.partition}:${beyond.offset} is beyond the frontier of partition ${beyond.partition} (${decided}): name a decided offset, or leave --as-of out for now`,
    );
  }
  return { kind: 'position', time: null, through: throughOf(parsed.positions, frontiers) };
}

/** `as of 0:7 1:-`, `as of now (0:9 1:-)`, `as of 2026-…Z (0:7 1:-)`. */
export function describeAsOf(asOf: { kind: string; time: string | null; through: Through }): string {
  const through = formatThrough(asOf.through);
  if (asOf.kind === 'position') return `as of ${through}`;
  return `as of ${asOf.kind === 'time' ? asOf.time : 'now'} (${through})`;
}
