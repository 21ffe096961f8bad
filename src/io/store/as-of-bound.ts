/**
 * Which decisions an answer of `explain` or `balances` includes (docs/design.md#sql-read-api), fixed as
 * one bound per partition (a `through` array of the read API) before anything is read, so that
 * every statement of a command answers the same question:
 *
 * - now: what is decided when the command starts, each partition's frontier − 1;
 * - a position: the named partitions up to and including the named offsets (each must be decided:
 *   below its frontier), the partitions not named as they are now;
 * - a time: per partition, the decisions committed at or before it (positions_at).
 */
import { parsePositions, positionBeyond, throughOf } from '../../domain/source-position.js';
import { invalidInput, usageError } from '../../kernel/amends-error.js';
import type { Queryable } from './postgres.js';
import { positionsAt, readFrontiers } from './read-api.js';

export type AsOfRequest = { kind: 'now' } | { kind: 'position'; text: string } | { kind: 'time'; at: string };

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
