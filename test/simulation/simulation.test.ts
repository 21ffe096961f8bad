/**
 * Deterministic simulation (quality.md §1.3). Every seed is replayable:
 *   AMENDS_SIM_SEED=1234 npx vitest run test/simulation   # one seed, with its trace
 *   AMENDS_SIM_SEEDS=10000 npx vitest run test/simulation # more seeds (default 2000)
 */
import { describe, expect, test } from 'vitest';
import { type SimResult, simulate } from './sim-world.js';

const seedCount = Number(process.env.AMENDS_SIM_SEEDS ?? 2000);
const seedBase = Number(process.env.AMENDS_SIM_SEED_BASE ?? 1);
const oneSeed = process.env.AMENDS_SIM_SEED;
/** Seeds per test, so progress shows and a failure names a small range. */
const chunk = 250;

async function check(seed: number): Promise<SimResult> {
  const result = await simulate(seed);
  if (result.violations.length > 0) {
    const replay = await simulate(seed, true);
    const tail = replay.trace.slice(-60).join('\n');
    throw new Error(
      `seed ${seed}: ${result.violations.join('; ')}\n` +
        `replay: AMENDS_SIM_SEED=${seed} npx vitest run test/simulation\n--- last trace lines ---\n${tail}`,
    );
  }
  return result;
}

describe('deterministic simulation', () => {
  if (oneSeed !== undefined) {
    test(`seed ${oneSeed}`, async () => {
      const result = await simulate(Number(oneSeed), true);
      console.log(result.trace.join('\n'));
      console.log(JSON.stringify({ ...result, trace: undefined }));
      expect(result.violations).toEqual([]);
    });
    return;
  }
  test('a seed replays exactly', async () => {
    const [first, second] = [await simulate(seedBase, true), await simulate(seedBase, true)];
    expect(first.trace.length).toBeGreaterThan(10);
    expect(second).toEqual(first);
  });
  for (let start = seedBase; start < seedBase + seedCount; start += chunk) {
    const end = Math.min(start + chunk, seedBase + seedCount);
    test(`seeds ${start}–${end - 1}`, async () => {
      const totals = new Map<string, number>();
      const add = (what: string, n: number) => totals.set(what, (totals.get(what) ?? 0) + n);
      for (let seed = start; seed < end; seed++) {
        const r = await check(seed);
        add('steps', r.steps);
        add('commits', r.commits);
        add('crashes', r.crashes);
        add('members', r.members);
        add('rebalances', r.rebalances);
        for (const [what, n] of Object.entries(r.counts)) add(what, n);
      }
      console.log(`seeds ${start}–${end - 1}: ${JSON.stringify(Object.fromEntries([...totals].sort()))}`);
      // The chaos phase's store faults must make groups ride through outages (worker.md §6).
      if (end - start === chunk) expect(totals.get('ride') ?? 0).toBeGreaterThan(0);
      // Summaries were checked while operations ran under their budget, not only between them.
      if (end - start === chunk) expect(totals.get('deadline running') ?? 0).toBeGreaterThan(0);
    });
  }
});
