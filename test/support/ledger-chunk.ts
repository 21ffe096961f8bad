/**
 * A seeded chunk of source lines for the transport and outage suites: posts (85%) and
 * cancels (15%) over the given stock keys and a week of days, with revisions 1-4 of a small
 * pool of transactions per chunk, so corrections and stale revisions occur.
 */
import type { Prng } from '../simulation/prng.js';

export interface ChunkKey {
  item: string;
  location: string;
}

export function ledgerChunk(
  prng: Prng,
  keys: readonly ChunkKey[],
  name: string,
  records: number,
  txnPool = 40,
): string {
  const lines: string[] = [];
  for (let i = 0; i < records; i++) {
    const { item, location } = prng.pick(keys);
    const txn = `${name}-T${prng.int(0, txnPool)}`;
    const rev = prng.int(1, 4);
    const value = prng.chance(0.15)
      ? { schema: 1, txn, rev, op: 'cancel', item, location }
      : { schema: 1, txn, rev, op: 'post', item, location, day: `2026-03-0${prng.int(1, 7)}`, qty: prng.int(-40, 40) };
    lines.push(JSON.stringify({ key: { item, location }, value }));
  }
  return `${lines.join('\n')}\n`;
}
