/**
 * The verifier's (item, location, day) records, as columns (issue 14: 2,000 keys over ~890
 * days are 1.8 million of them; as JavaScript objects in maps they were most of a 1.25 GB
 * verifier). A day is a number, its id; per id: its pair (an index into a small table of
 * (item, location) pairs with their terms, oracle-key-terms.ts), its day
 * code (day-code.ts), and what the comparison learns of it. An open-addressing table maps
 * (pair, code) to the id. About 33 bytes of columns and 4–8 bytes of table per day, of which
 * 12 and the table while the source is read.
 */
import type { NamespaceConfig } from '../domain/config.js';
import { ChunkedColumn } from './chunked-column.js';
import { dayCode, dayText, firstOddDayCode } from './day-code.js';
import { OracleKeyRules, type OracleKeyTerms } from './oracle-key-terms.js';
import { PairMap } from './pair-map.js';

/** A day's id in the ledger. */
export type LedgerDay = number;

const initialSlots = 1024;

export class LedgerDays {
  private readonly pairIndex = new PairMap<number>();
  private readonly pairs: { item: string; location: string; stockKey: OracleKeyTerms | undefined }[] = [];
  /** The pair of each of the oracle's stock key numbers (fast-oracle.ts `OracleVersion.key`). */
  private readonly keyPairs: number[] = [];
  private readonly rules: OracleKeyRules;
  /** Text of another shape than `DDDD-DD-DD` (only a damaged store can hold one): codes from `firstOddDayCode`. */
  private readonly oddDays = new Map<string, number>();
  private readonly oddNames: string[] = [];
  /** Open addressing, load ≤ 3/4: id + 1, 0 empty. */
  private slots = new Int32Array(initialSlots);
  private readonly pairOf = new ChunkedColumn((n) => new Int32Array(n));
  private readonly codeOf = new ChunkedColumn((n) => new Int32Array(n));
  // The columns below are written only by later phases (or for days with versions): their
  // blocks are made then, not while the oracle's state is at its largest (chunked-column.ts).
  /** Versions the oracle made of the day: 1 … count. */
  readonly count = new ChunkedColumn((n) => new Int32Array(n));
  /** Where version 1 lies in the ledger's sealed columns. */
  readonly first = new ChunkedColumn((n) => new Int32Array(n));
  /** The store's highest version of the day (0: none); the store's `version` is an `integer`. */
  readonly storeLatest = new ChunkedColumn((n) => new Int32Array(n));
  /** Output topic offset of the first correct copy of `storeLatest` (−1: none yet). */
  readonly latestCopy = new ChunkedColumn((n) => new Float64Array(n), -1);
  /** 1 when the view holds a row of the day. */
  readonly viewed = new ChunkedColumn((n) => new Uint8Array(n));
  size = 0;

  constructor(config: NamespaceConfig) {
    this.rules = new OracleKeyRules(config);
  }

  /** The day of the oracle's stock key number `key`, (item, location), and `day`, made if new. */
  ofKey(key: number, item: string, location: string, day: string): LedgerDay {
    let pair = this.keyPairs[key];
    if (pair === undefined) {
      pair = this.pairNumber(item, location);
      this.keyPairs[key] = pair;
    }
    return this.ofPair(pair, this.codeFor(day, true));
  }

  /** The day, made (with nothing known of it) if new. */
  of(item: string, location: string, day: string): LedgerDay {
    return this.ofPair(this.pairNumber(item, location), this.codeFor(day, true));
  }

  /** The day if it is known. */
  find(item: string, location: string, day: string): LedgerDay | undefined {
    const pair = this.pairIndex.get(item, location);
    const code = this.codeFor(day, false);
    if (pair === undefined || code === -1) return undefined;
    const at = this.lookup(pair, code);
    return at === -1 ? undefined : at;
  }

  /** The terms of the day's (item, location) if it is a stock key. */
  stockKey(d: LedgerDay): OracleKeyTerms | undefined {
    return this.pairs[this.pairOf.get(d)]?.stockKey;
  }

  name(d: LedgerDay): { item: string; location: string; day: string } {
    const pair = this.pairs[this.pairOf.get(d)] as LedgerDays['pairs'][number];
    const code = this.codeOf.get(d);
    const day = code >= firstOddDayCode ? (this.oddNames[code - firstOddDayCode] as string) : dayText(code);
    return { item: pair.item, location: pair.location, day };
  }

  /** Every id, ordered by (item, location, day) in code-point order. */
  sorted(compareText: (a: string, b: string) => number): Uint32Array {
    const byRank = [...this.pairs.keys()].sort((a, b) => {
      const [p, q] = [this.pairs[a], this.pairs[b]] as [LedgerDays['pairs'][number], LedgerDays['pairs'][number]];
      return compareText(p.item, q.item) || compareText(p.location, q.location);
    });
    const rankOf = new Float64Array(this.pairs.length);
    byRank.forEach((pair, rank) => {
      rankOf[pair] = rank;
    });
    // rank · 2^31 + code is exact below 2^53 (ranks below 2^22) and unique per day; code order
    // is day order (odd days last). A numeric sort of these, then each back to its id.
    const order = new Float64Array(this.size);
    for (let d = 0; d < this.size; d++)
      order[d] = (rankOf[this.pairOf.get(d)] as number) * 2 ** 31 + this.codeOf.get(d);
    order.sort();
    const ids = new Uint32Array(this.size);
    order.forEach((key, i) => {
      const code = key % 2 ** 31;
      ids[i] = this.lookup(byRank[(key - code) / 2 ** 31] as number, code);
    });
    return ids;
  }

  private ofPair(pair: number, code: number): LedgerDay {
    const found = this.lookup(pair, code);
    if (found !== -1) return found;
    if ((this.size + 1) * 4 > this.slots.length * 3) this.rehash();
    const d = this.size++;
    this.pairOf.set(d, pair);
    this.codeOf.set(d, code);
    this.place(d);
    return d;
  }

  private pairNumber(item: string, location: string): number {
    let pair = this.pairIndex.get(item, location);
    if (pair === undefined) {
      pair = this.pairs.length;
      if (pair >= 2 ** 22) throw new Error('verify: more than 2^22 (item, location) pairs');
      this.pairs.push({ item, location, stockKey: this.rules.of(item, location) });
      this.pairIndex.set(item, location, pair);
    }
    return pair;
  }

  /** The day's code; text of another shape gets one of its own when `make`, else −1. */
  private codeFor(day: string, make: boolean): number {
    const code = dayCode(day);
    if (code !== -1) return code;
    let odd = this.oddDays.get(day);
    if (odd === undefined) {
      if (!make) return -1;
      odd = firstOddDayCode + this.oddNames.length;
      this.oddDays.set(day, odd);
      this.oddNames.push(day);
    }
    return odd;
  }

  private lookup(pair: number, code: number): number {
    const mask = this.slots.length - 1;
    for (let i = hashOf(pair, code) & mask; ; i = (i + 1) & mask) {
      const slot = this.slots[i] as number;
      if (slot === 0) return -1;
      const d = slot - 1;
      if (this.codeOf.get(d) === code && this.pairOf.get(d) === pair) return d;
    }
  }

  private place(d: number): void {
    const mask = this.slots.length - 1;
    let i = hashOf(this.pairOf.get(d), this.codeOf.get(d)) & mask;
    while (this.slots[i] !== 0) i = (i + 1) & mask;
    this.slots[i] = d + 1;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    for (let d = 0; d < this.size; d++) this.place(d);
  }
}

function hashOf(pair: number, code: number): number {
  let h = Math.imul(pair, 0x9e3779b1) ^ Math.imul(code, 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}
