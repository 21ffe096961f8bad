/**
 * What this process last wrote of each stock key, so that the next batch of its partition
 * can be decided without reading the key's window again (key-window.ts): one statement per
 * batch instead of two. At batch size 1 the read was the second of two round trips.
 *
 * Valid only at the (epoch, frontier) of the partition's last acknowledged commit. A stock
 * key maps to one partition, and only that partition's commits write it, each moving the
 * frontier under the row lock: while the partition row still holds that (epoch, frontier),
 * nobody else wrote the key. The batch commit checks exactly that before it writes. Any
 * other outcome (fenced, unknown, an error) drops the partition's entries.
 *
 * An entry of a key holds:
 * - every stored day row from `from` on, and the last shown day before `from` (the window's
 *   shape, with an earlier start than a batch needs at most: key-window.ts);
 * - the stored authority of the transactions it last saw, newest last.
 * A transaction that is not held is taken as new. That is the one assumption the cache makes
 * that the (epoch, frontier) check cannot prove, so the commit checks it: the statement writes
 * nothing when one of them is stored after all (an old transaction's correction), and the
 * store then reads the windows and decides the batch again.
 *
 * Pure: no I/O. Bounded by named limits (LRU over keys; each key keeps its latest days and
 * transactions), so its memory never follows the history.
 */
import { compareCodePoints } from '../../domain/canonical-json.js';
import { type DayRow, dayRows, earliestTouchedDay, type KeyNeeds } from '../../domain/key-window.js';
import type { AuthorityEntry, KeyState } from '../../domain/ledger-state.js';

export interface WindowCacheLimits {
  /** Stock keys held, over all partitions (least recently used dropped first). */
  keysMax: number;
  /** Day rows held per key, the latest ones (a correction before them reads the window). */
  daysPerKeyMax: number;
  /** Authority entries held per key, the most recently written or read. */
  txnsPerKeyMax: number;
}

/** About 2,048 × (32 + 32) small entries: some 20 MB at most. */
export const windowCacheLimits: WindowCacheLimits = { keysMax: 2_048, daysPerKeyMax: 32, txnsPerKeyMax: 32 };

/** A key's window served from the cache: as the store would have read it, and what it assumes. */
export interface CachedWindow {
  /** Days from here on are all present; undefined: no day is known (the batch touches none). */
  start: string | undefined;
  /** The carried day (if any) and every day from `start` on: the cache's own, never to be changed. */
  days: readonly DayRow[];
  /** Day → the source offset that caused its latest version (the cache's own, read only). */
  causes: ReadonlyMap<string, number>;
  /** The stored authority of the batch's transactions that the cache holds. */
  authority: Map<string, AuthorityEntry>;
  /** The batch's transactions the cache does not hold, taken as new: the commit checks them. */
  assumedNew: string[];
}

/** A key as the acknowledged commit left it. */
export interface KeyAfterCommit {
  partition: number;
  /** The start of the window the batch was decided on (CachedWindow.start). */
  start: string | undefined;
  /** The window's state after the batch: its authority and days. */
  state: KeyState;
  /** Day → cause offset of its latest version, after the batch (read only: it may be the cache's own). */
  causes: ReadonlyMap<string, number>;
}

interface Entry {
  partition: number;
  generation: number;
  from: string | undefined;
  carried: DayRow | undefined;
  days: DayRow[];
  causes: Map<string, number>;
  authority: Map<string, AuthorityEntry>;
}

interface Validity {
  epoch: number;
  frontier: number;
  generation: number;
}

export class WindowCache {
  private readonly entries = new Map<string, Entry>();
  private readonly valid = new Map<number, Validity>();
  private generations = 0;

  constructor(private readonly limits: WindowCacheLimits = windowCacheLimits) {}

  /** Whether the partition's entries hold at (epoch, frontier); if not, they are dropped. */
  holds(partition: number, epoch: number, frontier: number): boolean {
    const v = this.valid.get(partition);
    if (v !== undefined && v.epoch === epoch && v.frontier === frontier) return true;
    this.drop(partition);
    return false;
  }

  /** Whether the partition's entries hold at some (epoch, frontier): a batch may find its keys here. */
  knows(partition: number): boolean {
    return this.valid.has(partition);
  }

  /** Forgets the partition: its entries never serve again (they age out of the LRU). */
  drop(partition: number): void {
    this.valid.delete(partition);
  }

  /** The key's window for `needs`, or undefined when the cache cannot give all of it. */
  window(partition: number, id: string, needs: KeyNeeds): CachedWindow | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined || entry.partition !== partition) return undefined;
    if (entry.generation !== this.valid.get(partition)?.generation) return undefined;
    const authority = new Map<string, AuthorityEntry>();
    const assumedNew: string[] = [];
    for (const txn of new Set(needs.revisions.map((r) => r.txn))) {
      const held = entry.authority.get(txn);
      if (held === undefined) assumedNew.push(txn);
      else authority.set(txn, { ...held });
    }
    const earliest = earliestTouchedDay(needs, authority);
    if (earliest !== undefined && (entry.from === undefined || compareCodePoints(entry.from, earliest) > 0)) {
      return undefined;
    }
    this.entries.delete(id);
    this.entries.set(id, entry);
    // Not copied: the engine decides on `windowState`'s copies, and a commit replaces entries.
    const days = entry.carried === undefined ? entry.days : [entry.carried, ...entry.days];
    return { start: entry.from, days, causes: entry.causes, authority, assumedNew };
  }

  /** After an acknowledged commit at (epoch, frontier): the keys the batch decided, as left. */
  committed(partition: number, epoch: number, frontier: number, keys: ReadonlyMap<string, KeyAfterCommit>): void {
    let v = this.valid.get(partition);
    if (v === undefined) {
      this.generations += 1;
      v = { epoch, frontier, generation: this.generations };
      this.valid.set(partition, v);
    }
    v.epoch = epoch;
    v.frontier = frontier;
    for (const [id, after] of keys) {
      const old = this.entries.get(id);
      const authority = old !== undefined && old.generation === v.generation ? old.authority : new Map();
      this.entries.delete(id);
      this.entries.set(id, this.entryOf(after, v.generation, authority));
    }
    for (const id of this.entries.keys()) {
      if (this.entries.size <= this.limits.keysMax) break;
      this.entries.delete(id);
    }
  }

  private entryOf(after: KeyAfterCommit, generation: number, authority: Map<string, AuthorityEntry>): Entry {
    for (const [txn, e] of after.state.authority) {
      authority.delete(txn);
      authority.set(txn, { ...e });
    }
    for (const txn of authority.keys()) {
      if (authority.size <= this.limits.txnsPerKeyMax) break;
      authority.delete(txn);
    }
    const { start } = after;
    // The window's rows: the carried day (before `start`, at most one) and every day from `start` on.
    const all = start === undefined ? [] : dayRows(after.state);
    const rows = all.filter((r) => compareCodePoints(r.day, start as string) >= 0);
    let carried = all.find((r) => compareCodePoints(r.day, start as string) < 0);
    let from = start;
    const cut = rows.length - this.limits.daysPerKeyMax;
    if (cut > 0) {
      // The last shown day of those dropped is the one carried into the first kept.
      carried = rows.slice(0, cut).findLast((r) => !r.output.retracted) ?? carried;
      from = (rows[cut] as DayRow).day;
      rows.splice(0, cut);
    }
    const causes = new Map<string, number>();
    for (const row of carried === undefined ? rows : [carried, ...rows]) {
      const cause = after.causes.get(row.day);
      if (cause !== undefined) causes.set(row.day, cause);
    }
    return { partition: after.partition, generation, from, carried, days: rows, causes, authority };
  }
}
