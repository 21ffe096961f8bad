/**
 * The incremental engine's state per stock key (used by decide.ts, never by the oracle).
 *
 * Plain data only — Maps of small objects of primitives — so that a later store can load
 * and save it per key (one row per txn, per day) and a restart can resume from it:
 * - authority: txn → its authoritative revision (docs/design.md#outcomes);
 * - dayTotals: day → sum and count of the authoritative posts on that day, so a change
 *   touches at most two days and closings are recomputed from the earliest one onward;
 * - outputs: day → the latest output version of that day (docs/design.md#output-versions);
 * - dayOrder: every day that is active or shown, ascending, so a change finds the closing
 *   carried into its earliest day and the days after it without walking the key's history.
 */
import { compareCodePoints } from './canonical-json.js';
import type { BalanceStatus } from './output-version.js';

export interface AuthorityEntry {
  rev: number;
  op: 'post' | 'cancel';
  /** Set for a post, null for a cancel. */
  day: string | null;
  qty: number | null;
}

export interface DayTotal {
  /** Σ qty of the authoritative posts on this day. */
  qty: number;
  /** How many authoritative posts fall on this day: the day is active while this is > 0, even if qty sums to 0. */
  posts: number;
}

export interface DayOutput {
  version: number;
  closing: number | null;
  status: BalanceStatus | null;
  retracted: boolean;
}

export interface KeyState {
  authority: Map<string, AuthorityEntry>;
  dayTotals: Map<string, DayTotal>;
  outputs: Map<string, DayOutput>;
  /**
   * The days in `dayTotals` or shown by `outputs` (latest version not retracted), in
   * ascending code-point order, each once. Between decisions both sets are the same days.
   */
  dayOrder: string[];
}

/** Every key's state, by `stockKeyId(item, location)` (config.ts). Keys appear on first use. */
export type LedgerState = Map<string, KeyState>;

export function emptyKeyState(): KeyState {
  return { authority: new Map(), dayTotals: new Map(), outputs: new Map(), dayOrder: [] };
}

/** A JSON-serialisable copy of one key's state, e.g. for a store or a restart test. */
export interface KeyStateSnapshot {
  authority: [txn: string, entry: AuthorityEntry][];
  dayTotals: [day: string, total: DayTotal][];
  outputs: [day: string, output: DayOutput][];
}

export function snapshotKeyState(state: KeyState): KeyStateSnapshot {
  return {
    authority: [...state.authority].map(([txn, e]) => [txn, { ...e }]),
    dayTotals: [...state.dayTotals].map(([day, t]) => [day, { ...t }]),
    outputs: [...state.outputs].map(([day, o]) => [day, { ...o }]),
  };
}

/** Restores a snapshot; without `dayTotals` they are rebuilt from the authority entries. */
export function restoreKeyState(snapshot: Omit<KeyStateSnapshot, 'dayTotals'> & Partial<KeyStateSnapshot>): KeyState {
  const authority = new Map(snapshot.authority.map(([txn, e]) => [txn, { ...e }]));
  const dayTotals = snapshot.dayTotals
    ? new Map(snapshot.dayTotals.map(([day, t]) => [day, { ...t }]))
    : dayTotalsFromAuthority(authority);
  const outputs = new Map(snapshot.outputs.map(([day, o]) => [day, { ...o }]));
  return { authority, dayTotals, outputs, dayOrder: dayOrderOf(dayTotals, outputs) };
}

/** The active or shown days, ascending (on load, never per record). */
function dayOrderOf(dayTotals: Map<string, DayTotal>, outputs: Map<string, DayOutput>): string[] {
  const days = new Set(dayTotals.keys());
  for (const [day, output] of outputs) if (!output.retracted) days.add(day);
  return [...days].sort(compareCodePoints);
}

/** Rebuilds per-day totals from the authority entries (on load, never per record). */
export function dayTotalsFromAuthority(authority: Map<string, AuthorityEntry>): Map<string, DayTotal> {
  const totals = new Map<string, DayTotal>();
  for (const entry of authority.values()) {
    if (entry.op !== 'post' || entry.day === null || entry.qty === null) continue;
    const total = totals.get(entry.day) ?? { qty: 0, posts: 0 };
    totals.set(entry.day, { qty: total.qty + entry.qty, posts: total.posts + 1 });
  }
  return totals;
}
