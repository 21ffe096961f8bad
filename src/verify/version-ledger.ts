/**
 * The oracle's output versions as the verifier keeps them for comparing the store, the
 * outbox, the output topic and the view (docs/design.md#bounded-verifier, step 5), which all hold them in
 * other orders than the oracle makes them (the store by (item, location, day, version), the
 * topic by relay order). Per version: its closing (NaN: retracted), its cause offset and a few
 * flags; everything else a version says follows from its key's configuration. While the
 * oracle runs, versions are appended to chunked columns (chunked-column.ts) with their day's
 * number; `seal` (once the source is read) sorts them day by day in place, so version v of a
 * day is one index. The bound: 20 bytes per version outside the JavaScript heap while
 * appending, 17 once sealed, plus ~40 per (key, day) (ledger-days.ts) — no record bytes, no
 * object per version or per day.
 *
 * A day the store, outbox or view names that the oracle never made is kept too (with no
 * versions), so the view can be judged against the store's latest version of it.
 */
import type { NamespaceConfig } from '../domain/config.js';
import { ChunkedColumn } from './chunked-column.js';
import type { OracleVersion } from './fast-oracle.js';
import { type LedgerDay, LedgerDays } from './ledger-days.js';
import type { ExpectedVersion } from './output-record-text.js';

export type { LedgerDay } from './ledger-days.js';

/** Per-version flags: where the comparison has found the version. */
export const seenInStore = 1;
export const seenInOutbox = 2;
export const publishedInOutbox = 4;
export const seenOnTopic = 8;

/** A day's versions up to this many are put back in cause order in place, more through an array. */
const sortInPlaceMax = 16;

interface Columns {
  closings: ChunkedColumn<Float64Array>;
  causes: ChunkedColumn<Float64Array>;
  /** Each version's day; dropped once sealed. */
  dayIds: ChunkedColumn<Int32Array> | undefined;
  /** Set by `seal`. */
  flags: Uint8Array | undefined;
}

export class VersionLedger {
  readonly days: LedgerDays;
  private readonly columns: Columns = {
    closings: new ChunkedColumn((n) => new Float64Array(n)),
    causes: new ChunkedColumn((n) => new Float64Array(n)),
    dayIds: new ChunkedColumn((n) => new Int32Array(n)),
    flags: undefined,
  };
  versionCount = 0;
  /** Days the oracle made a version of. */
  dayCount = 0;

  constructor(config: NamespaceConfig) {
    this.days = new LedgerDays(config);
  }

  /** The oracle's next version (of its day, in version order); only before `seal`. */
  add(v: OracleVersion): void {
    const { dayIds } = this.columns;
    if (!dayIds) throw new Error('verify: a version added after the ledger was sealed');
    const day = this.days.ofKey(v.key, v.item, v.location, v.day);
    const count = this.days.count.get(day);
    if (v.version !== count + 1) throw new Error(`verify: version ${v.version} of ${v.day} after ${count}`);
    if (this.versionCount === 2 ** 31 - 1) throw new Error('verify: more than 2^31 - 1 output versions');
    const i = this.versionCount++;
    this.columns.closings.set(i, v.closing === null ? Number.NaN : v.closing);
    this.columns.causes.set(i, v.causeOffset);
    dayIds.set(i, day);
    this.days.count.set(day, count + 1);
    if (count === 0) this.dayCount += 1;
  }

  /**
   * Lays the versions out day by day, in place (the oracle has made them all; idempotent): a
   * counting sort by day that swaps (American flag sort), then each day's versions back in
   * version order, which is their causes' order — a key's records all lie on one partition
   * and one record makes at most one version of a day, so a later version has a later cause.
   * In place, so sealing never holds a second copy of the versions.
   */
  seal(): void {
    const { dayIds } = this.columns;
    if (!dayIds) return;
    const { count, first: firstOf } = this.days;
    const next = new Int32Array(this.days.size);
    let first = 0;
    for (let day = 0; day < this.days.size; day++) {
      firstOf.set(day, first);
      next[day] = first;
      first += count.get(day);
    }
    for (let day = 0; day < this.days.size; day++) {
      const end = firstOf.get(day) + count.get(day);
      for (let i = next[day] as number; i < end; i = next[day] as number) {
        const d = dayIds.get(i);
        if (d === day) next[d] = i + 1;
        else {
          const to = next[d] as number;
          next[d] = to + 1;
          this.swap(i, to, dayIds);
        }
      }
    }
    for (let day = 0; day < this.days.size; day++) if (count.get(day) > 1) this.sortByCause(day);
    this.columns.dayIds = undefined;
    this.columns.flags = new Uint8Array(this.versionCount);
  }

  private swap(i: number, j: number, dayIds: ChunkedColumn<Int32Array>): void {
    for (const column of [this.columns.closings, this.columns.causes, dayIds]) {
      const t = column.get(i);
      column.set(i, column.get(j));
      column.set(j, t);
    }
  }

  /** A day's versions, laid out together, back in version (= cause) order. */
  private sortByCause(day: LedgerDay): void {
    const { closings, causes } = this.columns;
    const [first, count] = [this.days.first.get(day), this.days.count.get(day)];
    if (count <= sortInPlaceMax) {
      for (let i = first + 1; i < first + count; i++) {
        const [cause, closing] = [causes.get(i), closings.get(i)];
        let j = i - 1;
        for (; j >= first && causes.get(j) > cause; j--) {
          causes.set(j + 1, causes.get(j));
          closings.set(j + 1, closings.get(j));
        }
        causes.set(j + 1, cause);
        closings.set(j + 1, closing);
      }
    } else {
      const pairs: [number, number][] = [];
      for (let i = 0; i < count; i++) pairs.push([causes.get(first + i), closings.get(first + i)]);
      pairs.sort((a, b) => a[0] - b[0]);
      pairs.forEach(([cause, closing], i) => {
        causes.set(first + i, cause);
        closings.set(first + i, closing);
      });
    }
    for (let i = first + 1; i < first + count; i++) {
      if (causes.get(i) === causes.get(i - 1)) {
        const { item, location, day: text } = this.days.name(day);
        throw new Error(`verify: two versions of ${item}@${location} ${text} with cause ${causes.get(i)}`);
      }
    }
  }

  /** The day's id, made (without versions) if the oracle has none. */
  dayOf(item: string, location: string, day: string): LedgerDay {
    return this.days.of(item, location, day);
  }

  /** The day's id if the oracle or the store has named it. */
  findDay(item: string, location: string, day: string): LedgerDay | undefined {
    return this.days.find(item, location, day);
  }

  /** The oracle's version `version` of the day, if it made one. */
  version(day: LedgerDay, version: number): ExpectedVersion | undefined {
    const { closings, causes } = this.sealedColumns();
    const at = this.indexOf(day, version);
    const k = this.days.stockKey(day);
    if (!k || at === undefined) return undefined;
    const closing = closings.get(at);
    const shown = !Number.isNaN(closing);
    return {
      ...this.days.name(day),
      version,
      closing: shown ? closing : null,
      status: !shown ? null : closing < 0 ? 'NEGATIVE' : closing < k.threshold ? 'LOW' : 'OK',
      cause: { partition: k.partition, offset: causes.get(at) },
    };
  }

  /** The flags of a version the oracle made (0 for one it did not). */
  flags(day: LedgerDay, version: number): number {
    const { flags } = this.sealedColumns();
    const at = this.indexOf(day, version);
    return at === undefined ? 0 : (flags[at] as number);
  }

  /** Adds `bits` to the flags of a version the oracle made; nothing for one it did not. */
  mark(day: LedgerDay, version: number, bits: number): void {
    const { flags } = this.sealedColumns();
    const at = this.indexOf(day, version);
    if (at === undefined) return;
    flags[at] = (flags[at] as number) | bits;
  }

  private indexOf(day: LedgerDay, version: number): number | undefined {
    const i = version - 1;
    return Number.isInteger(i) && i >= 0 && i < this.days.count.get(day) ? this.days.first.get(day) + i : undefined;
  }

  /** The columns, sealed (sealing first: `first` is only set by `seal`). */
  private sealedColumns(): Columns & { flags: Uint8Array } {
    this.seal();
    return this.columns as Columns & { flags: Uint8Array };
  }
}
