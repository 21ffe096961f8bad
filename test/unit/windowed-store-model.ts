/**
 * A memory model of a store that keeps what PostgreSQL keeps (authority per transaction, a
 * row per day: total, post count, latest output, and the offset that caused it) and gives
 * each batch only its window (key-window.ts), as the PostgreSQL State reads it: the stored
 * authority of the batch's transactions, the days from the earliest touched one on, and the
 * last shown day before. With cache limits it first asks the store's window cache
 * (src/io/store/window-cache.ts) as the PostgreSQL State does, checks the transactions the
 * cache took as new as the commit statement does, and decides again on read windows when
 * one of them is stored.
 */
import { compareCodePoints } from '../../src/domain/canonical-json.js';
import { type NamespaceConfig, stockKeyId } from '../../src/domain/config.js';
import { type DecideResult, decideWithKeyState, type Screened, screenRecord } from '../../src/domain/decide.js';
import {
  batchNeeds,
  type DayRow,
  dayRowChanges,
  earliestTouchedDay,
  type KeyNeeds,
  windowState,
} from '../../src/domain/key-window.js';
import type { AuthorityEntry, KeyState } from '../../src/domain/ledger-state.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { type KeyAfterCommit, WindowCache, type WindowCacheLimits } from '../../src/io/store/window-cache.js';

interface StoredKey {
  authority: Map<string, AuthorityEntry>;
  days: Map<string, DayRow>;
  causes: Map<string, number>;
}

interface Window {
  start: string | undefined;
  state: KeyState;
  before: readonly DayRow[];
  causes: ReadonlyMap<string, number>;
}

/** The model is one store of one writer: its cache entries all live under partition 0. */
const modelPartition = 0;

export class WindowedStore {
  private readonly keys = new Map<string, StoredKey>();
  private readonly cache: WindowCache | undefined;
  private batches = 0;
  /** Day rows read per batch, summed: what the store's reads cost. */
  dayRowsRead = 0;
  /** Keys whose window came from the cache; batches decided again after a stale assumption. */
  cacheHits = 0;
  staleRetries = 0;

  constructor(
    private readonly config: NamespaceConfig,
    cacheLimits?: WindowCacheLimits,
  ) {
    this.cache = cacheLimits === undefined ? undefined : new WindowCache(cacheLimits);
  }

  decideBatch(records: readonly SourceRecord[]): DecideResult[] {
    const screened = records.map((r) => screenRecord(r, this.config));
    const needs = batchNeeds(screened);
    const cached = this.cache?.holds(modelPartition, 1, this.batches) ?? false;
    let decided = this.attempt(records, screened, needs, cached);
    if (decided === 'stale') {
      this.staleRetries += 1;
      this.cache?.drop(modelPartition);
      decided = this.attempt(records, screened, needs, false);
    }
    if (decided === 'stale') throw new Error('a batch decided on read windows was stale');
    return decided;
  }

  private attempt(
    records: readonly SourceRecord[],
    screened: readonly Screened[],
    needs: ReadonlyMap<string, KeyNeeds>,
    useCache: boolean,
  ): DecideResult[] | 'stale' {
    const windows = new Map<string, Window>();
    const assumedNew: [id: string, txn: string][] = [];
    for (const [id, need] of needs) {
      const hit = useCache ? this.cache?.window(modelPartition, id, need) : undefined;
      if (hit === undefined) {
        windows.set(id, this.read(id, need));
        continue;
      }
      this.cacheHits += 1;
      windows.set(id, {
        start: hit.start,
        state: windowState(hit.authority, hit.days),
        before: hit.days,
        causes: hit.causes,
      });
      for (const txn of hit.assumedNew) assumedNew.push([id, txn]);
    }
    const results = screened.map((s, i) => {
      if (s.kind === 'decided') return s.result;
      const window = windows.get(stockKeyId(s.stockKey.item, s.stockKey.location));
      if (window === undefined) throw new Error('no window for a screened key');
      return decideWithKeyState(records[i] as SourceRecord, s.envelope, s.stockKey, window.state);
    });
    // The commit statement's check: nothing is written when a transaction taken as new is stored.
    if (assumedNew.some(([id, txn]) => this.keys.get(id)?.authority.has(txn))) return 'stale';
    const causes = this.write(results, windows);
    this.batches += 1;
    this.cache?.committed(modelPartition, 1, this.batches, causes);
    return results;
  }

  /** The window as the store's statement reads it: authority of the batch's txns, days from the earliest touched. */
  private read(id: string, needs: KeyNeeds): Window {
    const stored = this.keys.get(id) ?? { authority: new Map(), days: new Map(), causes: new Map() };
    const authority = new Map<string, AuthorityEntry>();
    for (const txn of new Set(needs.revisions.map((r) => r.txn))) {
      const entry = stored.authority.get(txn);
      if (entry !== undefined) authority.set(txn, { ...entry });
    }
    const earliest = earliestTouchedDay(needs, authority);
    const before = earliest === undefined ? [] : windowDays(stored.days, earliest);
    this.dayRowsRead += before.length;
    const causes = new Map(before.map((d) => [d.day, stored.causes.get(d.day) as number]));
    return { start: earliest, state: windowState(authority, before), before, causes };
  }

  /**
   * What the batch commit writes: the authority changes and the changed day rows, each with
   * the cause the store would write (a new version's record, else the window's stored cause,
   * which must be the stored one). Returns the keys as the cache sees them after the commit.
   */
  private write(results: readonly DecideResult[], windows: Map<string, Window>): Map<string, KeyAfterCommit> {
    const newCauses = new Map<string, number>();
    for (const r of results) {
      for (const v of r.newVersions) newCauses.set(`${stockKeyId(v.item, v.location)} ${v.day}`, v.cause.offset);
      if (r.authorityChange === null) continue;
      const id = stockKeyId(r.decision.item as string, r.decision.location as string);
      this.stored(id).authority.set(r.authorityChange.txn, { ...r.authorityChange.entry });
    }
    const after = new Map<string, KeyAfterCommit>();
    for (const [id, window] of windows) {
      const stored = this.stored(id);
      const causes = new Map(window.causes);
      for (const row of dayRowChanges(window.before, window.state)) {
        const cause = newCauses.get(`${id} ${row.day}`) ?? window.causes.get(row.day);
        if (cause === undefined || (!newCauses.has(`${id} ${row.day}`) && cause !== stored.causes.get(row.day))) {
          throw new Error(`day ${row.day} of ${id}: cause ${cause} but ${stored.causes.get(row.day)} is stored`);
        }
        stored.days.set(row.day, row);
        stored.causes.set(row.day, cause);
        causes.set(row.day, cause);
      }
      after.set(id, { partition: modelPartition, start: window.start, state: window.state, causes });
    }
    return after;
  }

  private stored(id: string): StoredKey {
    let stored = this.keys.get(id);
    if (stored === undefined) {
      stored = { authority: new Map(), days: new Map(), causes: new Map() };
      this.keys.set(id, stored);
    }
    return stored;
  }
}

/** Every stored day from `earliest` on, and the last shown day before it (copies). */
function windowDays(days: ReadonlyMap<string, DayRow>, earliest: string): DayRow[] {
  const sorted = [...days.values()].sort((a, b) => compareCodePoints(a.day, b.day));
  const from = sorted.filter((d) => compareCodePoints(d.day, earliest) >= 0);
  const carry = sorted.filter((d) => compareCodePoints(d.day, earliest) < 0 && !d.output.retracted).at(-1);
  return [...(carry === undefined ? [] : [carry]), ...from].map((d) => ({
    day: d.day,
    total: { ...d.total },
    output: { ...d.output },
  }));
}
