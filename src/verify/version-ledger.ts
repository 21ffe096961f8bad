/**
 * The oracle's output versions as the verifier keeps them for comparing the store, the
 * outbox, the output topic and the view (verification.md, step 5), which all hold them in
 * other orders than the oracle makes them (the store by (item, location, day, version), the
 * topic by relay order). Per version: its closing (NaN: retracted), its cause offset and a few
 * flags; everything else a version says follows from its key's configuration. While the
 * oracle runs, versions are appended to chunked columns (chunked-column.ts) with their day's
 * number; `seal` (once the source is read) sorts them day by day in place, so version v of a
 * day is one index. The bound: 20 bytes per version outside the JavaScript heap while
 * appending, 17 once sealed, plus one small record per (key, day) — no record bytes, no
 * objects per version.
 *
 * A day the store, outbox or view names that the oracle never made is kept too (with no
 * versions), so the view can be judged against the store's latest version of it.
 */
import type { NamespaceConfig, StockKeyConfig } from '../domain/config.js';
import { ChunkedColumn } from './chunked-column.js';
import type { OracleVersion } from './fast-oracle.js';
import type { ExpectedVersion } from './output-record-text.js';
import { PairMap } from './pair-map.js';

/** Per-version flags: where the comparison has found the version. */
export const seenInStore = 1;
export const seenInOutbox = 2;
export const publishedInOutbox = 4;
export const seenOnTopic = 8;

export interface LedgerDay {
  /** The stock key's configuration, undefined for a day of a pair that is not configured. */
  stockKey: StockKeyConfig | undefined;
  item: string;
  location: string;
  day: string;
  /** The day's number in the ledger. */
  id: number;
  /** Versions the oracle made of the day: 1 … count. */
  count: number;
  /** Where version 1 lies in the sealed columns. */
  first: number;
  /** The store's highest version of the day (0: none). */
  storeLatest: number;
  /** Output topic offset of the first correct copy of `storeLatest` (−1: none yet). */
  latestCopy: number;
  /** Whether the view holds a row of the day. */
  viewed: boolean;
}

interface Columns {
  closings: ChunkedColumn<Float64Array>;
  causes: ChunkedColumn<Float64Array>;
  /** Each version's day; dropped once sealed. */
  dayIds: ChunkedColumn<Int32Array> | undefined;
  /** Set by `seal`. */
  flags: Uint8Array | undefined;
}

export class VersionLedger {
  private readonly days = new PairMap<Map<string, LedgerDay>>();
  private readonly stockKeys = new PairMap<StockKeyConfig>();
  private readonly dayList: LedgerDay[] = [];
  private readonly columns: Columns = {
    closings: new ChunkedColumn((n) => new Float64Array(n)),
    causes: new ChunkedColumn((n) => new Float64Array(n)),
    dayIds: new ChunkedColumn((n) => new Int32Array(n)),
    flags: undefined,
  };
  versionCount = 0;
  /** Days the oracle made a version of. */
  dayCount = 0;

  constructor(private readonly config: NamespaceConfig) {
    for (const k of config.stock_keys) this.stockKeys.set(k.item, k.location, k);
  }

  /** The oracle's next version (of its day, in version order); only before `seal`. */
  add(v: OracleVersion): void {
    const { dayIds } = this.columns;
    if (!dayIds) throw new Error('verify: a version added after the ledger was sealed');
    const k = this.config.stock_keys[v.key] as StockKeyConfig;
    const day = this.dayOf(k.item, k.location, v.day);
    if (v.version !== day.count + 1) throw new Error(`verify: version ${v.version} of ${v.day} after ${day.count}`);
    const i = this.versionCount++;
    this.columns.closings.set(i, v.closing === null ? Number.NaN : v.closing);
    this.columns.causes.set(i, v.causeOffset);
    dayIds.set(i, day.id);
    if (++day.count === 1) this.dayCount += 1;
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
    const next = new Int32Array(this.dayList.length);
    let first = 0;
    for (const day of this.dayList) {
      day.first = next[day.id] = first;
      first += day.count;
    }
    for (const day of this.dayList) {
      const end = day.first + day.count;
      for (let i = next[day.id] as number; i < end; i = next[day.id] as number) {
        const d = dayIds.get(i);
        if (d === day.id) next[d] = i + 1;
        else {
          const to = next[d] as number;
          next[d] = to + 1;
          this.swap(i, to, dayIds);
        }
      }
    }
    for (const day of this.dayList) if (day.count > 1) this.sortByCause(day);
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
    const pairs: [number, number][] = [];
    for (let i = 0; i < day.count; i++) pairs.push([causes.get(day.first + i), closings.get(day.first + i)]);
    pairs.sort((a, b) => a[0] - b[0]);
    pairs.forEach(([cause, closing], i) => {
      if (i > 0 && cause === (pairs[i - 1] as [number, number])[0]) {
        throw new Error(`verify: two versions of ${day.item}@${day.location} ${day.day} with cause ${cause}`);
      }
      causes.set(day.first + i, cause);
      closings.set(day.first + i, closing);
    });
  }

  /** The day's record, made (without versions) if the oracle has none. */
  dayOf(item: string, location: string, day: string): LedgerDay {
    let ofPair = this.days.get(item, location);
    if (!ofPair) {
      ofPair = new Map();
      this.days.set(item, location, ofPair);
    }
    let found = ofPair.get(day);
    if (!found) {
      const stockKey = this.stockKeys.get(item, location);
      const id = this.dayList.length;
      found = { stockKey, item, location, day, id, count: 0, first: 0, storeLatest: 0, latestCopy: -1, viewed: false };
      ofPair.set(day, found);
      this.dayList.push(found);
    }
    return found;
  }

  /** The oracle's version `version` of the day, if it made one. */
  version(day: LedgerDay, version: number): ExpectedVersion | undefined {
    const { closings, causes } = this.sealedColumns();
    const at = this.indexOf(day, version);
    const k = day.stockKey;
    if (!k || at === undefined) return undefined;
    const closing = closings.get(at);
    const shown = !Number.isNaN(closing);
    return {
      item: day.item,
      location: day.location,
      day: day.day,
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

  /** Every day, in no particular order. */
  *allDays(): IterableIterator<LedgerDay> {
    yield* this.dayList;
  }

  private indexOf(day: LedgerDay, version: number): number | undefined {
    const i = version - 1;
    return Number.isInteger(i) && i >= 0 && i < day.count ? day.first + i : undefined;
  }

  /** The columns, sealed (sealing first: `first` is only set by `seal`). */
  private sealedColumns(): Columns & { flags: Uint8Array } {
    this.seal();
    return this.columns as Columns & { flags: Uint8Array };
  }
}
