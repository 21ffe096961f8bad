/**
 * A growable column of numbers kept in fixed-size typed-array blocks, for the verifier's
 * per-transaction and per-version state (issue 14: bounded memory). Growing adds a block:
 * nothing is copied, so a column never holds two copies of itself at once, and the slack is
 * at most one block. The data lives outside the JavaScript heap, so it does not raise the
 * garbage collector's heap limit either.
 *
 * A block is made when an entry of it is first set; until then its entries read as `fill`. So
 * a column that is only written in a late phase (the view's marks, the topic's offsets) costs
 * nothing while the oracle's state is at its largest.
 */
export type Block = Int32Array | Uint32Array | Uint8Array | Float64Array;

const blockBits = 16;
/** Entries per block: 64 Ki (512 KiB of Float64). */
export const blockSize = 1 << blockBits;
const blockMask = blockSize - 1;

export class ChunkedColumn<T extends Block> {
  private readonly blocks: (T | undefined)[] = [];

  constructor(
    private readonly makeBlock: (size: number) => T,
    private readonly fill = 0,
  ) {}

  get(i: number): number {
    const block = this.blocks[i >>> blockBits];
    return block === undefined ? this.fill : (block[i & blockMask] as number);
  }

  /** Sets entry `i`, making its block when it has none yet. */
  set(i: number, value: number): void {
    const b = i >>> blockBits;
    let block = this.blocks[b];
    if (block === undefined) {
      block = this.makeBlock(blockSize);
      if (this.fill !== 0) block.fill(this.fill);
      while (this.blocks.length < b) this.blocks.push(undefined);
      this.blocks[b] = block;
    }
    block[i & blockMask] = value;
  }

  /** Bytes held: the blocks made so far. */
  get bytes(): number {
    return this.blocks.reduce((sum, b) => sum + (b?.byteLength ?? 0), 0);
  }
}
