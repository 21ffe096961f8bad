/**
 * A growable column of numbers kept in fixed-size typed-array blocks, for the verifier's
 * per-transaction and per-version state (issue 14: bounded memory). Growing adds a block:
 * nothing is copied, so a column never holds two copies of itself at once, and the slack is
 * at most one block. The data lives outside the JavaScript heap, so it does not raise the
 * garbage collector's heap limit either.
 */
export type Block = Int32Array | Uint32Array | Uint8Array | Float64Array;

const blockBits = 16;
/** Entries per block: 64 Ki (512 KiB of Float64). */
export const blockSize = 1 << blockBits;
const blockMask = blockSize - 1;

export class ChunkedColumn<T extends Block> {
  private readonly blocks: T[] = [];

  constructor(private readonly makeBlock: (size: number) => T) {}

  get(i: number): number {
    return (this.blocks[i >>> blockBits] as T)[i & blockMask] as number;
  }

  /** Sets entry `i`, adding blocks up to it when it is past the end. */
  set(i: number, value: number): void {
    const b = i >>> blockBits;
    while (b >= this.blocks.length) this.blocks.push(this.makeBlock(blockSize));
    (this.blocks[b] as T)[i & blockMask] = value;
  }

  /** Bytes held: the blocks allocated so far. */
  get bytes(): number {
    return this.blocks.reduce((sum, b) => sum + b.byteLength, 0);
  }
}
