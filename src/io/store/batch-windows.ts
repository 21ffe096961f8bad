/**
 * A batch's windows of its keys (key-window.ts), in memory: made from the window read's row
 * (sql/load-window.ts) and checked there, the batch decided on them, the day rows it changed,
 * and what the acknowledged commit leaves of them for the window cache (window-cache.ts), or
 * what it gives. No I/O: the store (postgres-state.ts) reads and writes, this shapes and decides.
 */

import { stockKeyId } from '../../domain/config.js';
import { type DecideResult, decideWithKeyState, type Screened } from '../../domain/decide.js';
import { type DayRow, dayRowChanges, earliestTouchedDay, type KeyNeeds, windowState } from '../../domain/key-window.js';
import type { AuthorityEntry, DayOutput, KeyState } from '../../domain/ledger-state.js';
import type { StockKeyTerms } from '../../domain/stock-key-terms.js';
import { errorMessage } from '../../kernel/error-message.js';
import { assertInvariant } from '../../kernel/invariant.js';
import { int8ToSafeInteger, nullableInt8ToSafeInteger } from '../../kernel/safe-integer.js';
import { type PartitionRow, type SourceRecord, StoreFailure } from '../../machines/ports.js';
import type { ChangedDay, TxnRef } from './commit-batch-values.js';
import type { LoadWindowRow } from './sql/load-window.js';
import type { KeyAfterCommit, WindowCache } from './window-cache.js';

/** A key's window as read, and the state the batch is decided on. */
export interface KeyWindow {
  stockKey: StockKeyTerms;
  /** Every stored day from here on is in `before`; undefined: none is (the batch touches none). */
  start: string | undefined;
  /** The day rows it was made of, and where each day's latest version came from (read only). */
  before: readonly DayRow[];
  causes: ReadonlyMap<string, number>;
  state: KeyState;
}

/** The partition row and the windows, as one read returned them. */
export interface LoadedWindows {
  row: PartitionRow;
  /** The row's claim (migration 0009; null: none, or claimed by a build before it). */
  claim: string | null;
  keys: Map<string, KeyWindow>;
}

/** The windows the cache gives (with the transactions they take as new), and the keys it cannot give. */
export function cachedWindows(
  cache: WindowCache,
  partition: number,
  needs: ReadonlyMap<string, KeyNeeds>,
  useCache: boolean,
): { keys: Map<string, KeyWindow>; toRead: Map<string, KeyNeeds>; assumedNew: TxnRef[] } {
  const keys = new Map<string, KeyWindow>();
  const toRead = new Map<string, KeyNeeds>();
  const assumedNew: TxnRef[] = [];
  for (const [id, need] of needs) {
    const w = useCache ? cache.window(partition, id, need) : undefined;
    if (w === undefined) {
      toRead.set(id, need);
      continue;
    }
    const { stockKey } = need;
    const state = windowState(w.authority, w.days);
    keys.set(id, { stockKey, start: w.start, before: w.days, causes: w.causes, state });
    for (const txn of w.assumedNew) assumedNew.push({ item: stockKey.item, location: stockKey.location, txn });
  }
  return { keys, toRead, assumedNew };
}

/** Key → day → the offset of the record that made the day's newest version in this batch. */
export type NewCauses = ReadonlyMap<string, ReadonlyMap<string, number>>;

/** Each key's days the batch made a new version of, with the offset of the record that made the newest. */
export function newCauses(results: readonly DecideResult[]): NewCauses {
  const causes = new Map<string, Map<string, number>>();
  for (const r of results) {
    for (const v of r.newVersions) {
      const id = stockKeyId(v.item, v.location);
      let days = causes.get(id);
      if (days === undefined) {
        days = new Map();
        causes.set(id, days);
      }
      days.set(v.day, v.cause.offset);
    }
  }
  return causes;
}

/** Each window as the acknowledged batch left it, with the causes of its days' latest versions. */
export function afterCommit(
  partition: number,
  keys: ReadonlyMap<string, KeyWindow>,
  causes: NewCauses,
): Map<string, KeyAfterCommit> {
  const after = new Map<string, KeyAfterCommit>();
  for (const [id, w] of keys) {
    // Only the batch's new versions change causes: a key's whole window is not walked (nor copied) for them.
    const fresh = causes.get(id);
    let dayCauses: ReadonlyMap<string, number> = w.causes;
    if (fresh !== undefined) {
      const merged = new Map(w.causes);
      for (const [day, cause] of fresh) if (w.state.outputs.has(day)) merged.set(day, cause);
      dayCauses = merged;
    }
    after.set(id, { partition, start: w.start, state: w.state, causes: dayCauses });
  }
  return after;
}

/**
 * Every day row the decided batch changed (key-window.ts `dayRowChanges`), with the offset
 * that caused its latest version: this batch's record for a new version, else the stored one.
 */
export function changedDays(keys: ReadonlyMap<string, KeyWindow>, newCauses: NewCauses): ChangedDay[] {
  const changed: ChangedDay[] = [];
  for (const [id, w] of keys) {
    const fresh = newCauses.get(id);
    for (const row of dayRowChanges(w.before, w.state)) {
      const cause = fresh?.get(row.day) ?? w.causes.get(row.day);
      assertInvariant(cause !== undefined, `day ${row.day} of ${id} changed without a cause`);
      changed.push({ item: w.stockKey.item, location: w.stockKey.location, row, cause });
    }
  }
  return changed;
}

/**
 * The windows from the statement's rows, one per key of the batch. The window must start at
 * or before the earliest day the engine's own rule finds (key-window.ts): a later start would
 * decide on a partial history. Checked here, where the data crosses into the engine.
 */
export function windowsOf(needs: ReadonlyMap<string, KeyNeeds>, found: LoadWindowRow): Map<string, KeyWindow> {
  const rows = new Map<string, { authority: Map<string, AuthorityEntry>; days: DayRow[]; causes: Map<string, number> }>(
    [...needs.keys()].map((id) => [id, { authority: new Map(), days: [], causes: new Map() }]),
  );
  const rowsOf = (item: unknown, location: unknown) => rows.get(stockKeyId(String(item), String(location)));
  for (const [item, location, txn, rev, op, day, qty] of found.authority) {
    rowsOf(item, location)?.authority.set(String(txn), authorityEntryOf(rev, op, day, qty));
  }
  for (const [item, location, day, version, closing, status, retracted, qty, posts, cause] of found.days) {
    const key = rowsOf(item, location);
    const total = { qty: int8ToSafeInteger(qty, 'day qty'), posts: int8ToSafeInteger(posts, 'day posts') };
    key?.days.push({ day: String(day), total, output: dayOutputOf(version, closing, status, retracted) });
    key?.causes.set(String(day), int8ToSafeInteger(cause, 'day cause'));
  }
  const starts = new Map(
    found.earliest.map(([item, location, day]) => [stockKeyId(String(item), String(location)), String(day)]),
  );
  const windows = new Map<string, KeyWindow>();
  for (const [id, need] of needs) {
    const { authority, days, causes } = rows.get(id) as NonNullable<ReturnType<typeof rowsOf>>;
    const wanted = earliestTouchedDay(need, authority);
    const start = starts.get(id);
    assertInvariant(
      wanted === undefined || (start !== undefined && start <= wanted),
      `the window of ${id} starts at ${start}, after the earliest touched day ${wanted}`,
    );
    windows.set(id, { stockKey: need.stockKey, start, before: days, causes, state: windowState(authority, days) });
  }
  return windows;
}

/** The windows the read would give keys without any history: no rows, each from its earliest day. */
export function windowsWithoutHistory(needs: ReadonlyMap<string, KeyNeeds>): Map<string, KeyWindow> {
  const earliest = [...needs.values()].map((n) => [
    n.stockKey.item,
    n.stockKey.location,
    earliestTouchedDay(n, new Map()),
  ]);
  return windowsOf(needs, { epoch: null, frontier: null, claim: null, authority: [], earliest, days: [] });
}

/** The engine's results for the batch on its windows; a refusal (e.g. a closing beyond 2^53) sends nothing. */
export function decideOnWindows(
  records: readonly SourceRecord[],
  screened: readonly Screened[],
  keys: ReadonlyMap<string, KeyWindow>,
): DecideResult[] {
  try {
    return screened.map((s, i) => {
      if (s.kind === 'decided') return s.result;
      const window = keys.get(stockKeyId(s.stockKey.item, s.stockKey.location));
      assertInvariant(window !== undefined, `no window loaded for ${s.stockKey.item}@${s.stockKey.location}`);
      return decideWithKeyState(records[i] as SourceRecord, s.envelope, s.stockKey, window.state);
    });
  } catch (error) {
    throw new StoreFailure('failed_before_commit', `deciding the batch failed: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}

function authorityEntryOf(rev: unknown, op: unknown, day: unknown, qty: unknown): AuthorityEntry {
  assertInvariant(op === 'post' || op === 'cancel', `authority op ${String(op)}`);
  assertInvariant(day === null || typeof day === 'string', `authority day ${String(day)}`);
  return {
    rev: int8ToSafeInteger(rev, 'authority rev'),
    op,
    day,
    qty: nullableInt8ToSafeInteger(qty, 'authority qty'),
  };
}

function dayOutputOf(version: unknown, closing: unknown, status: unknown, retracted: unknown): DayOutput {
  assertInvariant(status === null || status === 'NEGATIVE' || status === 'LOW' || status === 'OK', 'output status');
  assertInvariant(typeof retracted === 'boolean', 'output retracted');
  return {
    version: int8ToSafeInteger(version, 'output version'),
    closing: nullableInt8ToSafeInteger(closing, 'output closing'),
    status,
    retracted,
  };
}
