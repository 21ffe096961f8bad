/**
 * A merge of two streams of one partition in offset order (docs/design.md#bounded-verifier, step 5): the
 * oracle's decisions over the source records and the store's decision rows. Each side is
 * pushed as it is read; a pair is judged as soon as both heads say which comes first, so
 * only what one side has read ahead of the other is held (one chunk at most, when the reader
 * alternates by chunks). `judge` gets each offset once, with what each side holds there.
 */

/** How far the consumed front of a queue may grow before it is dropped. */
const consumedMax = 4_096;

class Queue<T> {
  private items: T[] = [];
  private head = 0;
  ended = false;

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    const item = this.items[this.head];
    this.head += 1;
    if (this.head >= consumedMax) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/** Judges the offsets of both streams in order, once each. */
export class OffsetMerge<S extends { offset: number }, T extends { offset: number }> {
  private readonly source = new Queue<S>();
  private readonly store = new Queue<T>();

  constructor(private readonly judge: (source: S | undefined, store: T | undefined) => void) {}

  pushSource(item: S): void {
    this.source.push(item);
    this.drain();
  }

  pushStore(item: T): void {
    this.store.push(item);
    this.drain();
  }

  /** Whether the source has read ahead of every store row pushed so far: the store must be read on. */
  needsStore(): boolean {
    return !this.store.ended && this.store.peek() === undefined && this.source.peek() !== undefined;
  }

  endSource(): void {
    this.source.ended = true;
    this.drain();
  }

  endStore(): void {
    this.store.ended = true;
    this.drain();
  }

  private drain(): void {
    for (;;) {
      const s = this.source.peek();
      const t = this.store.peek();
      if ((s === undefined && !this.source.ended) || (t === undefined && !this.store.ended)) return;
      if (s === undefined && t === undefined) return;
      if (t === undefined || (s !== undefined && s.offset < t.offset)) this.judge(this.source.shift(), undefined);
      else if (s === undefined || t.offset < s.offset) this.judge(undefined, this.store.shift());
      else this.judge(this.source.shift(), this.store.shift());
    }
  }
}
