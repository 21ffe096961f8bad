/**
 * One stock key's days for the fast oracle (domain.md §5): every day that ever held an
 * authoritative post, in ascending order, with per day the sum (`total`) and count (`posts`)
 * of the authoritative posts on it, a Fenwick tree over the totals (so a closing is
 * opening + one prefix sum, O(log days), recomputed from authority rather than carried from
 * the previous version), and what S(K) showed last (closing, or nothing) with its version count.
 *
 * Days are kept as text (`YYYY-MM-DD` orders like the calendar) in parallel arrays. A day is
 * inserted once; ledgers mostly append the newest day (O(log days)); a day inserted before
 * the last one rebuilds the tree (O(days)), once per such day.
 */
export class KeyDays {
  readonly days: string[] = [];
  readonly total: number[] = [];
  readonly posts: number[] = [];
  /** S(K) before the next APPLIED: the shown closing, NaN while the day is not shown. */
  readonly shown: number[] = [];
  readonly versions: number[] = [];
  /** 1-based Fenwick tree over `total`. */
  private tree: number[] = [0];

  /** The slot of `day`, inserting it (no posts yet) when new. */
  slotOf(day: string): number {
    const n = this.days.length;
    if (n === 0 || (this.days[n - 1] as string) < day) {
      this.append(day);
      return n;
    }
    const at = this.search(day);
    if (this.days[at] === day) return at;
    this.days.splice(at, 0, day);
    this.total.splice(at, 0, 0);
    this.posts.splice(at, 0, 0);
    this.shown.splice(at, 0, Number.NaN);
    this.versions.splice(at, 0, 0);
    this.rebuild();
    return at;
  }

  /** The slot of `day` if it is known. */
  find(day: string): number | undefined {
    const at = this.search(day);
    return this.days[at] === day ? at : undefined;
  }

  /** Adds one authoritative post of `qty` (or removes one with `count` −1). */
  addPost(slot: number, qty: number, count: 1 | -1): void {
    this.total[slot] = (this.total[slot] as number) + qty;
    this.posts[slot] = (this.posts[slot] as number) + count;
    for (let i = slot + 1; i < this.tree.length; i += i & -i) this.tree[i] = (this.tree[i] as number) + qty;
  }

  /** Σ total over slots [0, slot]. */
  prefix(slot: number): number {
    let sum = 0;
    for (let i = slot + 1; i > 0; i -= i & -i) sum += this.tree[i] as number;
    return sum;
  }

  private append(day: string): void {
    this.days.push(day);
    this.total.push(0);
    this.posts.push(0);
    this.shown.push(Number.NaN);
    this.versions.push(0);
    // A new zero slot i covers (i − lowbit(i), i]: the sum of the slots before it in that range.
    const i = this.tree.length;
    this.tree.push(this.prefix(i - 2) - this.prefix(i - (i & -i) - 1));
  }

  private rebuild(): void {
    const tree = [0, ...this.total];
    for (let i = 1; i < tree.length; i++) {
      const parent = i + (i & -i);
      if (parent < tree.length) tree[parent] = (tree[parent] as number) + (tree[i] as number);
    }
    this.tree = tree;
  }

  /** The first slot whose day is ≥ `day`. */
  private search(day: string): number {
    let [lo, hi] = [0, this.days.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.days[mid] as string) < day) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
