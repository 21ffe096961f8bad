/**
 * The fast oracle's authority (docs/design.md#outcomes): per (stock key, transaction) the authoritative
 * revision, its day (or none: a cancel) and its quantity. It is the one part of the
 * verifier's memory that grows with the history (a correction may name any transaction ever
 * posted), so it is packed as docs/design.md#envelope allows: a txn is 1–64 ASCII characters, so its
 * bytes go into one arena; `rev` (1 … 2^31−1), `qty` (±10^9) and the interned day with the
 * id's length fit 32-bit columns (chunked-column.ts: they grow without copies); an
 * open-addressing table holds entry numbers. About 20 bytes of columns, the id's bytes and 4–8 bytes of table per transaction,
 * against ~150 for a Map of objects (issue 14: 1,000,000 transactions in a 300 MB verifier).
 */
import { ChunkedColumn } from './chunked-column.js';

/** Entry number of a transaction not (yet) known. */
export const unknownTxn = -1;
/** Day id of a cancel (no day). */
export const noDay = -1;

/** docs/design.md#envelope: a txn has at most 64 characters. */
const txnLengthMax = 64;
const lengthBits = 7;
const lengthMask = (1 << lengthBits) - 1;
/** Arena blocks: an id never straddles two, so at most 63 bytes per block are left unused. */
const arenaBlockBits = 20;
const arenaBlockSize = 1 << arenaBlockBits;
/** `start` is a Uint32: 4 GiB of ids. */
const arenaBlocksMax = 2 ** (32 - arenaBlockBits);
const initialSlots = 1024;

export class TxnAuthority {
  /** Open addressing, load ≤ 3/4: entry number + 1, 0 empty. */
  private slots = new Int32Array(initialSlots);
  private readonly arena: Uint8Array[] = [];
  /** The arena block being filled (−1: none yet) and the bytes used of it. */
  private arenaBlock = -1;
  private arenaUsed = arenaBlockSize;
  private readonly start = new ChunkedColumn((n) => new Uint32Array(n));
  /** (day id + 1) << 7 | the id's length: a day id below 2^25 (there are 3.65 million calendar days). */
  private readonly dayAndLength = new ChunkedColumn((n) => new Uint32Array(n));
  private readonly keyOf = new ChunkedColumn((n) => new Int32Array(n));
  private readonly revs = new ChunkedColumn((n) => new Int32Array(n));
  private readonly qtys = new ChunkedColumn((n) => new Int32Array(n));
  private readonly dayIdByName = new Map<string, number>();
  private readonly dayNames: string[] = [];
  count = 0;

  /** The entry of (key, txn), or `unknownTxn`. */
  find(key: number, txn: string): number {
    const mask = this.slots.length - 1;
    for (let i = hashOf(key, txn) & mask; ; i = (i + 1) & mask) {
      const slot = this.slots[i] as number;
      if (slot === 0) return unknownTxn;
      const entry = slot - 1;
      if (this.keyOf.get(entry) === key && this.sameTxn(entry, txn)) return entry;
    }
  }

  /** A new entry for (key, txn), which `find` did not know. */
  add(key: number, txn: string): number {
    if ((this.count + 1) * 4 > this.slots.length * 3) this.rehash(this.slots.length * 2);
    const entry = this.count++;
    this.keyOf.set(entry, key);
    this.storeTxn(entry, txn);
    this.place(entry, hashOf(key, txn));
    return entry;
  }

  rev(entry: number): number {
    return this.revs.get(entry);
  }

  qty(entry: number): number {
    return this.qtys.get(entry);
  }

  /** The entry's day, undefined for a cancel. */
  day(entry: number): string | undefined {
    const id = (this.dayAndLength.get(entry) >>> lengthBits) - 1;
    return id === noDay ? undefined : this.dayNames[id];
  }

  /** Makes (rev, day, qty) the entry's authority; rev and qty as docs/design.md#envelope bounds them. */
  set(entry: number, rev: number, day: string | undefined, qty: number): void {
    if (rev !== (rev | 0) || qty !== (qty | 0)) throw new RangeError(`verify: rev ${rev} or qty ${qty} out of range`);
    this.revs.set(entry, rev);
    this.qtys.set(entry, qty);
    const id = day === undefined ? noDay : this.dayId(day);
    this.dayAndLength.set(entry, (((id + 1) << lengthBits) | this.lengthOf(entry)) >>> 0);
  }

  private dayId(day: string): number {
    let id = this.dayIdByName.get(day);
    if (id === undefined) {
      id = this.dayNames.length;
      if (id + 1 >= 2 ** (32 - lengthBits))
        throw new RangeError('verify: more distinct days than there are calendar days');
      this.dayNames.push(day);
      this.dayIdByName.set(day, id);
    }
    return id;
  }

  private lengthOf(entry: number): number {
    return this.dayAndLength.get(entry) & lengthMask;
  }

  private sameTxn(entry: number, txn: string): boolean {
    if (this.lengthOf(entry) !== txn.length) return false;
    const at = this.start.get(entry);
    const block = this.arena[at >>> arenaBlockBits] as Uint8Array;
    const from = at & (arenaBlockSize - 1);
    for (let i = 0; i < txn.length; i++) if (block[from + i] !== txn.charCodeAt(i)) return false;
    return true;
  }

  private storeTxn(entry: number, txn: string): void {
    if (txn.length < 1 || txn.length > txnLengthMax) throw new RangeError(`verify: txn of ${txn.length} characters`);
    if (this.arenaUsed + txn.length > arenaBlockSize) {
      if (this.arenaBlock + 1 === arenaBlocksMax) throw new RangeError('verify: transaction ids exceed 4 GiB');
      this.arenaBlock += 1;
      if (this.arenaBlock === this.arena.length) this.arena.push(new Uint8Array(arenaBlockSize));
      this.arenaUsed = 0;
    }
    const block = this.arena[this.arenaBlock] as Uint8Array;
    const offset = this.arenaUsed;
    for (let i = 0; i < txn.length; i++) {
      const unit = txn.charCodeAt(i);
      if (unit > 0x7f) throw new RangeError(`verify: txn ${JSON.stringify(txn)} is not ASCII`);
      block[offset + i] = unit;
    }
    this.start.set(entry, this.arenaBlock * arenaBlockSize + offset);
    this.dayAndLength.set(entry, txn.length);
    this.arenaUsed += txn.length;
  }

  /**
   * Forgets every entry but keeps the memory, for the next partition's transactions: freeing
   * and allocating again would leave the freed blocks in glibc's heap, still resident.
   */
  clear(): void {
    this.slots.fill(0);
    this.count = 0;
    this.arenaBlock = -1;
    this.arenaUsed = arenaBlockSize;
  }

  private storedHash(entry: number): number {
    const at = this.start.get(entry);
    const block = this.arena[at >>> arenaBlockBits] as Uint8Array;
    const from = at & (arenaBlockSize - 1);
    return hashOfBytes(this.keyOf.get(entry), block, from, this.lengthOf(entry));
  }

  private place(entry: number, hash: number): void {
    const mask = this.slots.length - 1;
    let i = hash & mask;
    while (this.slots[i] !== 0) i = (i + 1) & mask;
    this.slots[i] = entry + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    for (let entry = 0; entry < this.count; entry++) this.place(entry, this.storedHash(entry));
  }

  /** Bytes held (the tests check that `clear` keeps them for reuse). */
  get bytes(): number {
    const columns = [this.start, this.dayAndLength, this.keyOf, this.revs, this.qtys];
    return this.slots.byteLength + this.arena.length * arenaBlockSize + columns.reduce((s, c) => s + c.bytes, 0);
  }
}

/** FNV-1a over the key number and the id's code units. */
function hashOf(key: number, txn: string): number {
  let h = Math.imul(0x811c9dc5 ^ key, 0x01000193);
  for (let i = 0; i < txn.length; i++) h = Math.imul(h ^ txn.charCodeAt(i), 0x01000193);
  return h ^ (h >>> 15);
}

/** `hashOf` of a stored entry, from the arena (a rehash has no strings). */
function hashOfBytes(key: number, bytes: Uint8Array, from: number, length: number): number {
  let h = Math.imul(0x811c9dc5 ^ key, 0x01000193);
  for (let i = from; i < from + length; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  return h ^ (h >>> 15);
}
