/**
 * Source positions for "as of" questions (docs/design.md#sql-read-api, issue 36): a position names,
 * per partition, the last source offset included. `explain` and `balances` take one as
 * `--as-of P:O[,P:O…]`; the SQL read API takes it as a `through` array whose element i is
 * partition i's bound. A partition the text does not name is taken as decided so far (its
 * frontier − 1): a stock key's records all lie on its own partition, so each key's answer is
 * the answer at its own partition's bound.
 */
import { isCalendarDate } from './text-rules.js';

/** Per partition (index), the last included offset; -1 when nothing of it is included. */
export type Through = readonly number[];

/** `P:O` pairs, comma-separated: partition → last included offset, or a one-line reason. */
export function parsePositions(
  text: string,
  partitions: number,
): { ok: true; positions: Map<number, number> } | { ok: false; reason: string } {
  const positions = new Map<number, number>();
  for (const part of text.split(',')) {
    const match = /^\s*(0|[1-9][0-9]*):(0|[1-9][0-9]*)\s*$/.exec(part);
    if (match === null) return { ok: false, reason: `${JSON.stringify(part)} is not PARTITION:OFFSET (e.g. 0:7)` };
    const partition = Number(match[1]);
    const offset = Number(match[2]);
    if (partition >= partitions) {
      return { ok: false, reason: `partition ${partition} is not in [0, ${partitions}) of this namespace` };
    }
    if (!Number.isSafeInteger(offset)) return { ok: false, reason: `offset ${match[2]} is too large` };
    if (positions.has(partition)) return { ok: false, reason: `partition ${partition} is named twice` };
    positions.set(partition, offset);
  }
  return { ok: true, positions };
}

/** The first named offset at or beyond its partition's frontier (not decided yet), if any. */
export function positionBeyond(
  positions: ReadonlyMap<number, number>,
  frontiers: readonly number[],
): { partition: number; offset: number; frontier: number } | undefined {
  for (const [partition, offset] of [...positions].sort((a, b) => a[0] - b[0])) {
    const frontier = frontiers[partition] ?? 0;
    if (offset >= frontier) return { partition, offset, frontier };
  }
  return undefined;
}

/** The bound of every partition: the named offset, or what is decided so far. */
export function throughOf(positions: ReadonlyMap<number, number>, frontiers: readonly number[]): number[] {
  return frontiers.map((frontier, partition) => positions.get(partition) ?? frontier - 1);
}

/** `0:7 1:-`: each partition's bound, `-` where nothing of it is included. */
export function formatThrough(through: Through): string {
  return through.map((offset, partition) => `${partition}:${offset < 0 ? '-' : offset}`).join(' ');
}

/** `as of 0:7 1:-`, `as of now (0:9 1:-)`, `as of 2026-…Z (0:7 1:-)`: what an answer includes. */
export function describeAsOf(asOf: { kind: string; time: string | null; through: Through }): string {
  const through = formatThrough(asOf.through);
  if (asOf.kind === 'position') return `as of ${through}`;
  return `as of ${asOf.kind === 'time' ? asOf.time : 'now'} (${through})`;
}

/**
 * An instant with an explicit zone, RFC 3339 style (`2026-03-05T10:00:00Z`,
 * `2026-03-05 10:00+01:00`): one without a zone would be read in the database session's zone.
 */
export function isZonedTime(text: string): boolean {
  const match = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})$/i.exec(text);
  if (match === null || !isCalendarDate(match[1])) return false;
  return Number(match[2]) < 24 && Number(match[3]) < 60 && Number(match[4] ?? 0) < 60;
}
