/**
 * mulberry32: a 32-bit generator whose whole state is one integer, so a seed replays the same
 * sequence on any machine and Node version. The one copy for the deterministic simulation,
 * the seeded kill tests and the benchmark's traffic: randomness here is always an input (the
 * seed), never Math.random. Hand-written on purpose: pure-rand is only a transitive
 * dependency of fast-check here, not one we may import.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
