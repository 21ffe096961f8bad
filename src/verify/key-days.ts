/**
 * One stock key's days for the fast oracle (docs/design.md#output-versions): every day that ever held an
 * authoritative post, in ascending order, with per day the sum (`total`) and count (`posts`)
 * of the authoritative posts on it, a Fenwick tree over the totals (so a closing is
 * opening + one prefix sum, O(log days), recomputed from authority rather than carried from
 * the previous version), and what S(K) showed last (closing, or nothing) with its version count.
 *
 * Days are day codes (day-code.ts: YYYYMMDD orders like the calendar) in parallel typed arrays
 * that grow by half when full: about 36 bytes per day and no object or string per day (issue
 * 14: 2,000 keys over ~890 days each were 1.8 million JavaScript objects). A day is inserted
 * once; ledgers mostly append the newest day (O(log days)); a day inserted before the last
 * one shifts the later ones and rebuilds the tree (O(days)), once per such day.
 */
const initialCapacity = 16;

export class KeyDays {
  length = 0;
  days = new Int32Array(initialCapacity);
  total = new Float64Array(initialCapacity);
  posts = new Int32Array(initialCapacity);
  /** S(K) before the next APPLIED: the shown closing, NaN while the day is not shown. */
  shown = new Float64Array(initialCapacity);
  versions = new Int32Array(initialCapacity);
  /** 1-based Fenwick tree over `total`. */
  private tree = new Float64Array(initialCapacity + 1);

  /** The slot of the day `code`, inserting it (no posts yet) when new. */
  slotOf(code: number): number {
    const n = this.length;
    if (n === this.days.length) this.grow();
    if (n === 0 || (this.days[n - 1] as number) < code) {
      this.append(code);
      return n;
    }
    const at = this.search(code);
    if (this.days[at] === code) return at;
    for (const column of [this.days, this.total, this.posts, this.shown, this.versions]) {
      column.copyWithin(at + 1, at, n);
    }
    this.clearSlot(at, code);
    this.length = n + 1;
    this.rebuild();
    return at;
  }

  /** The slot of the day `code` if it is known. */
  find(code: number): number | undefined {
    const at = this.search(code);
    return at < this.length && this.days[at] === code ? at : undefined;
  }

  /** Adds one authoritative post of `qty` (or removes one with `count` −1). */
  addPost(slot: number, qty: number, count: 1 | -1): void {
    this.total[slot] = (this.total[slot] as number) + qty;
    this.posts[slot] = (this.posts[slot] as number) + count;
    for (let i = slot + 1; i <= this.length; i += i & -i) this.tree[i] = (this.tree[i] as number) + qty;
  }

  /** Σ total over slots [0, slot]. */
  prefix(slot: number): number {
    let sum = 0;
    for (let i = slot + 1; i > 0; i -= i & -i) sum += this.tree[i] as number;
    return sum;
  }

  private append(code: number): void {
    const n = this.length;
    this.clearSlot(n, code);
    this.length = n + 1;
    // The new zero slot's node i covers (i − lowbit(i), i]: the sum of the slots before it in that range.
    const i = n + 1;
    this.tree[i] = this.prefix(i - 2) - this.prefix(i - (i & -i) - 1);
  }

  /** Slot `at` holds the day `code`, with no posts, not shown. */
  private clearSlot(at: number, code: number): void {
    this.days[at] = code;
    this.total[at] = 0;
    this.posts[at] = 0;
    this.shown[at] = Number.NaN;
    this.versions[at] = 0;
  }

  private rebuild(): void {
    const tree = this.tree;
    tree.fill(0);
    for (let i = 1; i <= this.length; i++) {
      tree[i] = (tree[i] as number) + (this.total[i - 1] as number);
      const parent = i + (i & -i);
      if (parent <= this.length) tree[parent] = (tree[parent] as number) + (tree[i] as number);
    }
  }

  private grow(): void {
    const capacity = this.days.length + (this.days.length >>> 1);
    this.days = grown(this.days, new Int32Array(capacity));
    this.total = grown(this.total, new Float64Array(capacity));
    this.posts = grown(this.posts, new Int32Array(capacity));
    this.shown = grown(this.shown, new Float64Array(capacity));
    this.versions = grown(this.versions, new Int32Array(capacity));
    this.tree = grown(this.tree, new Float64Array(capacity + 1));
  }

  /** The first slot whose day is ≥ `code`. */
  private search(code: number): number {
    let [lo, hi] = [0, this.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.days[mid] as number) < code) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function grown<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
