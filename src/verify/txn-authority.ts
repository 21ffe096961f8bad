/**
 * The fast oracle's authority (domain.md §4): per (stock key, transaction) the authoritative
 * revision, its day (or none: a cancel) and its quantity. It is the one part of the
 * verifier's memory that grows with the history (a correction may name any transaction ever
 * posted), so it is packed: the transaction ids' UTF-16 code units in one arena, the fields
 * in typed columns, and an open-addressing table of entry numbers — about 50 bytes per
 * transaction against ~150 for a Map of objects (issue 14: 1,000,000 transactions must fit
 * in a 300 MB verifier). Days are interned: a ledger has few of them.
 */

/** Entry number of a transaction not (yet) known. */
export const unknownTxn = -1;
/** Day id of a cancel (no day). */
export const noDay = -1;

const initialEntries = 1024;

export class TxnAuthority {
  /** Open addressing, load ≤ 1/2: entry number + 1, 0 empty. */
  private slots = new Int32Array(initialEntries * 2);
  private chars = new Uint16Array(initialEntries * 16);
  private charsUsed = 0;
  private start = new Uint32Array(initialEntries);
  private length = new Int32Array(initialEntries);
  private keyOf = new Int32Array(initialEntries);
  private revs = new Float64Array(initialEntries);
  private qtys = new Float64Array(initialEntries);
  private dayIds = new Int32Array(initialEntries);
  private readonly dayIdByName = new Map<string, number>();
  private readonly dayNames: string[] = [];
  count = 0;

  /** The entry of (key, txn), or `unknownTxn`. */
  find(key: number, txn: string): number {
    const hash = hashOf(key, txn);
    const mask = this.slots.length - 1;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const slot = this.slots[i] as number;
      if (slot === 0) return unknownTxn;
      const entry = slot - 1;
      if (this.keyOf[entry] === key && this.sameTxn(entry, txn)) return entry;
    }
  }

  /** A new entry for (key, txn), which `find` did not know. */
  add(key: number, txn: string): number {
    if (this.count === this.revs.length) this.growEntries();
    if ((this.count + 1) * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    const entry = this.count++;
    const hash = hashOf(key, txn);
    this.keyOf[entry] = key;
    this.storeTxn(entry, txn);
    this.place(entry, hash);
    return entry;
  }

  rev(entry: number): number {
    return this.revs[entry] as number;
  }

  qty(entry: number): number {
    return this.qtys[entry] as number;
  }

  /** The entry's day, undefined for a cancel. */
  day(entry: number): string | undefined {
    const id = this.dayIds[entry] as number;
    return id === noDay ? undefined : this.dayNames[id];
  }

  /** Makes (rev, day, qty) the entry's authority. */
  set(entry: number, rev: number, day: string | undefined, qty: number): void {
    this.revs[entry] = rev;
    this.qtys[entry] = qty;
    this.dayIds[entry] = day === undefined ? noDay : this.dayId(day);
  }

  private dayId(day: string): number {
    let id = this.dayIdByName.get(day);
    if (id === undefined) {
      id = this.dayNames.length;
      this.dayNames.push(day);
      this.dayIdByName.set(day, id);
    }
    return id;
  }

  private sameTxn(entry: number, txn: string): boolean {
    if (this.length[entry] !== txn.length) return false;
    const from = this.start[entry] as number;
    for (let i = 0; i < txn.length; i++) if (this.chars[from + i] !== txn.charCodeAt(i)) return false;
    return true;
  }

  private storeTxn(entry: number, txn: string): void {
    const needed = this.charsUsed + txn.length;
    if (needed > 0xffffffff) throw new RangeError('verify: transaction ids exceed 2^32 code units');
    if (needed > this.chars.length)
      this.chars = grown(this.chars, Math.max(needed, Math.ceil(this.chars.length * 1.5)));
    for (let i = 0; i < txn.length; i++) this.chars[this.charsUsed + i] = txn.charCodeAt(i);
    this.start[entry] = this.charsUsed;
    this.length[entry] = txn.length;
    this.charsUsed += txn.length;
  }

  private storedHash(entry: number): number {
    return hashOfStored(
      this.keyOf[entry] as number,
      this.chars,
      this.start[entry] as number,
      this.length[entry] as number,
    );
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

  private growEntries(): void {
    const n = Math.ceil(this.revs.length * 1.5);
    this.start = grown(this.start, n);
    this.length = grown(this.length, n);
    this.keyOf = grown(this.keyOf, n);
    this.revs = grown(this.revs, n);
    this.qtys = grown(this.qtys, n);
    this.dayIds = grown(this.dayIds, n);
  }
}

type Column = Int32Array | Uint32Array | Uint16Array | Float64Array;

function grown<T extends Column>(column: T, size: number): T {
  const next = new (column.constructor as new (n: number) => T)(size);
  next.set(column);
  return next;
}

/** FNV-1a over the key number and the id's code units. */
function hashOf(key: number, txn: string): number {
  let h = Math.imul(0x811c9dc5 ^ key, 0x01000193);
  for (let i = 0; i < txn.length; i++) h = Math.imul(h ^ txn.charCodeAt(i), 0x01000193);
  return h ^ (h >>> 15);
}

/** `hashOf` of a stored entry, from the arena (a rehash has no strings). */
function hashOfStored(key: number, chars: Uint16Array, from: number, length: number): number {
  let h = Math.imul(0x811c9dc5 ^ key, 0x01000193);
  for (let i = from; i < from + length; i++) h = Math.imul(h ^ (chars[i] as number), 0x01000193);
  return h ^ (h >>> 15);
}
