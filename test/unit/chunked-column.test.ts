import { describe, expect, it } from 'vitest';
import { blockSize, ChunkedColumn } from '../../src/verify/chunked-column.js';

describe('a chunked column', () => {
  it('reads its fill until an entry is set, and makes only the block set', () => {
    const column = new ChunkedColumn((n) => new Float64Array(n), -1);
    expect(column.get(5 * blockSize + 3)).toBe(-1);
    expect(column.bytes).toBe(0);
    column.set(5 * blockSize + 3, 42);
    expect(column.get(5 * blockSize + 3)).toBe(42);
    expect(column.get(5 * blockSize + 4)).toBe(-1);
    expect(column.get(0)).toBe(-1);
    expect(column.bytes).toBe(blockSize * 8);
  });

  it('reads 0 by default', () => {
    const column = new ChunkedColumn((n) => new Int32Array(n));
    column.set(blockSize, 7);
    expect([column.get(0), column.get(blockSize), column.get(blockSize + 1)]).toEqual([0, 7, 0]);
  });
});
