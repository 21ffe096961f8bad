/**
 * A memory model of a store that keeps what PostgreSQL keeps (authority per transaction, a
 * row per day: total, post count, latest output) and gives each batch only its window
 * (key-window.ts), as the PostgreSQL State reads it: the stored authority of the batch's
 * transactions, the days from the earliest touched one on, and the last shown day before.
 */
import { compareCodePoints } from '../../src/domain/canonical-json.js';
import type { NamespaceConfig } from '../../src/domain/config.js';
import { type DecideResult, decideWithKeyState, screenRecord } from '../../src/domain/decide.js';
import {
  batchNeeds,
  type DayRow,
  dayRowChanges,
  earliestTouchedDay,
  windowState,
} from '../../src/domain/key-window.js';
import type { AuthorityEntry, KeyState } from '../../src/domain/ledger-state.js';
import type { SourceRecord } from '../../src/domain/source-record.js';

interface StoredKey {
  authority: Map<string, AuthorityEntry>;
  days: Map<string, DayRow>;
}

export class WindowedStore {
  private readonly keys = new Map<string, StoredKey>();
  /** Day rows read per batch, summed: what the store's reads cost. */
  dayRowsRead = 0;

  constructor(private readonly config: NamespaceConfig) {}

  decideBatch(records: readonly SourceRecord[]): DecideResult[] {
    const screened = records.map((r) => screenRecord(r, this.config));
    const windows = new Map<string, { state: KeyState; before: DayRow[] }>();
    for (const [id, needs] of batchNeeds(screened)) {
      const stored = this.keys.get(id) ?? { authority: new Map(), days: new Map() };
      const authority = new Map<string, AuthorityEntry>();
      for (const txn of new Set(needs.revisions.map((r) => r.txn))) {
        const entry = stored.authority.get(txn);
        if (entry !== undefined) authority.set(txn, { ...entry });
      }
      const earliest = earliestTouchedDay(needs, authority);
      const before = earliest === undefined ? [] : windowDays(stored.days, earliest);
      this.dayRowsRead += before.length;
      windows.set(id, { state: windowState(authority, before), before });
    }
    const results = screened.map((s, i) => {
      if (s.kind === 'decided') return s.result;
      const window = windows.get(JSON.stringify([s.stockKey.item, s.stockKey.location]));
      if (window === undefined) throw new Error('no window for a screened key');
      return decideWithKeyState(records[i] as SourceRecord, s.envelope, s.stockKey, window.state);
    });
    this.write(results, windows);
    return results;
  }

  /** What the batch commit writes: the authority changes and the changed day rows. */
  private write(results: readonly DecideResult[], windows: Map<string, { state: KeyState; before: DayRow[] }>): void {
    for (const r of results) {
      if (r.authorityChange === null) continue;
      const id = JSON.stringify([r.decision.item, r.decision.location]);
      this.stored(id).authority.set(r.authorityChange.txn, { ...r.authorityChange.entry });
    }
    for (const [id, window] of windows) {
      const stored = this.stored(id);
      for (const row of dayRowChanges(window.before, window.state)) stored.days.set(row.day, row);
    }
  }

  private stored(id: string): StoredKey {
    let stored = this.keys.get(id);
    if (stored === undefined) {
      stored = { authority: new Map(), days: new Map() };
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
