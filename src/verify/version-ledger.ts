/**
 * The oracle's output versions as the verifier keeps them for comparing the store, the
 * outbox, the output topic and the view (verification.md, step 5), which all hold them in
 * other orders than the oracle makes them (the store by (item, location, day, version), the
 * topic by relay order). Per (stock key, day): the versions' closings (NaN: retracted) and
 * causes, in version order, and a few flags each; everything else a version says follows
 * from its key's configuration. The bound: 24 bytes per version (three packed number arrays)
 * plus one small record per (key, day) — no record bytes, no objects per version.
 *
 * A day the store, outbox or view names that the oracle never made is kept too (with no
 * versions), so the view can be judged against the store's latest version of it.
 */
import type { NamespaceConfig, StockKeyConfig } from '../domain/config.js';
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
  closings: number[];
  causes: number[];
  flags: number[];
  /** The store's highest version of the day (0: none). */
  storeLatest: number;
  /** Output topic offset of the first correct copy of `storeLatest` (−1: none yet). */
  latestCopy: number;
  /** Whether the view holds a row of the day. */
  viewed: boolean;
}

export class VersionLedger {
  private readonly days = new PairMap<Map<string, LedgerDay>>();
  private readonly stockKeys = new PairMap<StockKeyConfig>();
  versionCount = 0;
  /** Days the oracle made a version of. */
  dayCount = 0;

  constructor(private readonly config: NamespaceConfig) {
    for (const k of config.stock_keys) this.stockKeys.set(k.item, k.location, k);
  }

  add(v: OracleVersion): void {
    const k = this.config.stock_keys[v.key] as StockKeyConfig;
    const day = this.dayOf(k.item, k.location, v.day);
    day.closings.push(v.closing === null ? Number.NaN : v.closing);
    day.causes.push(v.causeOffset);
    day.flags.push(0);
    if (day.closings.length === 1) this.dayCount += 1;
    this.versionCount += 1;
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
      found = {
        stockKey,
        item,
        location,
        day,
        closings: [],
        causes: [],
        flags: [],
        storeLatest: 0,
        latestCopy: -1,
        viewed: false,
      };
      ofPair.set(day, found);
    }
    return found;
  }

  /** The oracle's version `version` of the day, if it made one. */
  version(day: LedgerDay, version: number): ExpectedVersion | undefined {
    const i = version - 1;
    const k = day.stockKey;
    if (!k || !Number.isInteger(i) || i < 0 || i >= day.closings.length) return undefined;
    const closing = day.closings[i] as number;
    const shown = !Number.isNaN(closing);
    return {
      item: day.item,
      location: day.location,
      day: day.day,
      version,
      closing: shown ? closing : null,
      status: !shown ? null : closing < 0 ? 'NEGATIVE' : closing < k.threshold ? 'LOW' : 'OK',
      cause: { partition: k.partition, offset: day.causes[i] as number },
    };
  }

  /** Every day, in no particular order. */
  *allDays(): IterableIterator<LedgerDay> {
    for (const ofPair of this.days.values()) yield* ofPair.values();
  }
}
