/**
 * The part of a stock key's state one batch needs (docs/design.md#outcomes, #output-versions), so a store reads that
 * and not the key's history:
 * - the stored authority of the batch's transactions (nothing else decides STALE,
 *   DUPLICATE, CONFLICT or APPLIED for them);
 * - every stored day from the earliest day the batch may touch on, retracted ones included
 *   (a re-activated day continues its version count), and the last shown day before it,
 *   whose closing is carried into the first recomputed day.
 *
 * A day is touched by an applied revision: its own post day, and the day its transaction's
 * authoritative post held. Only a revision newer than the stored one can apply, so older
 * and equal ones (redeliveries, stale replays) touch nothing and widen nothing. Any window
 * that starts at or before the earliest touched day gives the same decisions and versions
 * as the whole state: the engine only visits days from a record's earliest touched day on,
 * and carries the closing of the shown day before it, which the batch cannot change.
 *
 * The store keeps, per day, the day's total of authoritative posts with its count, and its
 * latest output version (`DayRow`); `dayRowChanges` says which rows a decided batch changed.
 */
import { compareCodePoints } from './canonical-json.js';
import { stockKeyId } from './config.js';
import type { Screened } from './decide.js';
import type { AuthorityEntry, DayOutput, DayTotal, KeyState } from './ledger-state.js';
import { restoreKeyState } from './ledger-state.js';
import type { StockKeyTerms } from './stock-key-terms.js';

/** One revision of the batch that reached the authority checks (decide.ts `screenRecord`). */
export interface BatchRevision {
  txn: string;
  rev: number;
  /** Its post day; null for a cancel. */
  day: string | null;
}

/** What a batch asks of one stock key. */
export interface KeyNeeds {
  stockKey: StockKeyTerms;
  revisions: BatchRevision[];
}

/** A stored day: its authoritative posts' total and count, and its latest output version. */
export interface DayRow {
  day: string;
  total: DayTotal;
  output: DayOutput;
}

/** The batch's revisions grouped by stock key (`stockKeyId`), in batch order. */
export function batchNeeds(screened: readonly Screened[]): Map<string, KeyNeeds> {
  const needs = new Map<string, KeyNeeds>();
  for (const s of screened) {
    if (s.kind !== 'authority') continue;
    const id = stockKeyId(s.stockKey.item, s.stockKey.location);
    let key = needs.get(id);
    if (key === undefined) {
      key = { stockKey: s.stockKey, revisions: [] };
      needs.set(id, key);
    }
    const e = s.envelope;
    key.revisions.push({ txn: e.txn, rev: e.rev, day: e.op === 'post' ? e.day : null });
  }
  return needs;
}

/**
 * The earliest day the batch may touch, given the stored authority of its transactions
 * (absent: a new transaction); undefined when it can touch none.
 */
export function earliestTouchedDay(needs: KeyNeeds, stored: ReadonlyMap<string, AuthorityEntry>): string | undefined {
  let earliest: string | undefined;
  const consider = (day: string | null) => {
    if (day !== null && (earliest === undefined || compareCodePoints(day, earliest) < 0)) earliest = day;
  };
  for (const r of needs.revisions) {
    const held = stored.get(r.txn);
    if (held !== undefined && r.rev <= held.rev) continue;
    consider(r.day);
    consider(held?.day ?? null);
  }
  return earliest;
}

/**
 * The window as the engine's `KeyState`: `authority` holds the stored entries of the
 * batch's transactions, `days` every stored day from the earliest touched one on plus the
 * last shown day before it (any order).
 */
export function windowState(authority: ReadonlyMap<string, AuthorityEntry>, days: readonly DayRow[]): KeyState {
  return restoreKeyState({
    authority: [...authority].map(([txn, entry]) => [txn, entry]),
    dayTotals: days.filter((d) => d.total.posts > 0).map((d) => [d.day, d.total]),
    outputs: days.map((d) => [d.day, d.output]),
  });
}

/** Every day of the state as a day row (copies), ascending: its total (zero when none) and latest output. */
export function dayRows(state: KeyState): DayRow[] {
  const rows: DayRow[] = [];
  for (const [day, output] of state.outputs) {
    const total = state.dayTotals.get(day) ?? { qty: 0, posts: 0 };
    rows.push({ day, total: { ...total }, output: { ...output } });
  }
  return rows.sort((a, b) => compareCodePoints(a.day, b.day));
}

/**
 * The day rows a decided batch changed in its window, ascending: a new total or a new
 * output version. `before` are the rows the window was made of; `after` the window's
 * state once the batch was decided on it.
 */
export function dayRowChanges(before: readonly DayRow[], after: KeyState): DayRow[] {
  const old = new Map(before.map((d) => [d.day, d]));
  return dayRows(after).filter((row) => {
    const was = old.get(row.day);
    return !(
      was !== undefined &&
      was.output.version === row.output.version &&
      was.total.qty === row.total.qty &&
      was.total.posts === row.total.posts
    );
  });
}
