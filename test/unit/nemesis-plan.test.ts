/**
 * The chaos run's fault plan (src/showcase/nemesis-plan.ts): replayable by seed, and every plan
 * of a 60 s run holds what issue 17 asks of one: at least six faults of at least four kinds,
 * a broker and a database fault among them, every hold within the outage budget, the
 * database away past one operation's budget, broker faults far enough apart to restart.
 * Against the HA database (issue 33) every 60 s plan also fails the primary over in each of
 * the three ways, failovers far enough apart for the old primary to rejoin.
 */
import { describe, expect, it } from 'vitest';
import {
  databaseKinds,
  failoverKinds,
  faultKinds,
  type NemesisLimits,
  planFaults,
} from '../../src/showcase/nemesis-plan.js';

const limits: NemesisLimits = {
  durationMs: 60_000,
  outageBudgetMs: 30_000,
  operationBudgetMs: 20_000,
  partitions: 2,
  database: 'single',
};
const ha: NemesisLimits = { ...limits, database: 'ha' };

describe('the nemesis plan', () => {
  it('is the same for the same seed, and another for another seed', () => {
    expect(planFaults(7, limits)).toEqual(planFaults(7, limits));
    expect(planFaults(7, limits)).not.toEqual(planFaults(8, limits));
  });

  it('gives every 60 s run at least six faults of four kinds, broker and database among them (seeds 0-1999)', () => {
    for (let seed = 0; seed < 2_000; seed++) {
      const plan = planFaults(seed, limits);
      const kinds = new Set(plan.map((f) => f.kind));
      expect(plan.length, `seed ${seed}`).toBeGreaterThanOrEqual(6);
      expect(kinds.size, `seed ${seed}`).toBeGreaterThanOrEqual(4);
      expect(kinds.has('broker-kill'), `seed ${seed}`).toBe(true);
      expect(kinds.has('db-restart') || kinds.has('db-away'), `seed ${seed}`).toBe(true);
    }
  });

  it('keeps each fault within the run and the outage budget, in order, brokers 30 s apart (seeds 0-999, 600 s)', () => {
    const long = { ...limits, durationMs: 600_000 };
    for (let seed = 0; seed < 1_000; seed++) {
      const plan = planFaults(seed, long);
      let last = 0;
      let lastBroker = -Infinity;
      for (const f of plan) {
        expect(f.at_ms, `seed ${seed}`).toBeGreaterThan(last);
        expect(f.at_ms + f.hold_ms, `seed ${seed}`).toBeLessThanOrEqual(long.durationMs);
        expect(f.hold_ms, `seed ${seed}`).toBeLessThan(long.outageBudgetMs);
        if (f.kind === 'db-away') expect(f.hold_ms).toBeGreaterThan(long.operationBudgetMs);
        if (f.kind === 'broker-kill') {
          expect(f.at_ms - lastBroker).toBeGreaterThanOrEqual(30_000);
          lastBroker = f.at_ms;
        }
        last = f.at_ms + f.hold_ms;
      }
      expect(plan.map((f) => f.n)).toEqual(plan.map((_, i) => i + 1));
    }
  });

  it("gives a 600 s run every kind of its database's faults, and none of the other's (seeds 0-199)", () => {
    for (let seed = 0; seed < 200; seed++) {
      for (const l of [limits, ha]) {
        const kinds = new Set(planFaults(seed, { ...l, durationMs: 600_000 }).map((f) => f.kind));
        expect([...kinds].sort(), `seed ${seed} ${l.database}`).toEqual([...databaseKinds[l.database]].sort());
      }
    }
    expect(new Set([...databaseKinds.single, ...databaseKinds.ha])).toEqual(new Set(faultKinds));
  });

  it("plans no database absence when one operation's budget leaves no room for it within the outage budget", () => {
    const tight = { ...limits, durationMs: 600_000, outageBudgetMs: 25_000 };
    for (let seed = 0; seed < 200; seed++) {
      expect(planFaults(seed, tight).some((f) => f.kind === 'db-away')).toBe(false);
    }
  });

  it('fails the HA primary over in all three ways in every 60 s run, beside a broker kill (seeds 0-1999)', () => {
    for (let seed = 0; seed < 2_000; seed++) {
      const plan = planFaults(seed, ha);
      const kinds = new Set(plan.map((f) => f.kind));
      expect(plan.length, `seed ${seed}`).toBeGreaterThanOrEqual(6);
      for (const kind of [...failoverKinds, 'broker-kill'] as const)
        expect(kinds.has(kind), `seed ${seed} ${kind}`).toBe(true);
      expect(kinds.has('db-restart') || kinds.has('db-away'), `seed ${seed}`).toBe(false);
    }
  });

  it('spaces HA failovers 15 s apart and cuts the primary off for longer than its leader key lives (seeds 0-999, 600 s)', () => {
    const long = { ...ha, durationMs: 600_000 };
    for (let seed = 0; seed < 1_000; seed++) {
      let lastFailoverEnd = -Infinity;
      for (const f of planFaults(seed, long)) {
        if (!failoverKinds.includes(f.kind)) continue;
        expect(f.at_ms - lastFailoverEnd, `seed ${seed} fault ${f.n}`).toBeGreaterThanOrEqual(15_000);
        if (f.kind === 'primary-isolated') {
          expect(f.hold_ms).toBeGreaterThanOrEqual(14_000);
          expect(f.hold_ms).toBeLessThanOrEqual(18_000);
        } else expect(f.hold_ms).toBe(0);
        expect(f.target).toBe('the primary');
        lastFailoverEnd = f.at_ms + f.hold_ms;
      }
    }
  });

  it('plans the same HA run for the same seed, and another than the single database', () => {
    expect(planFaults(3, ha)).toEqual(planFaults(3, ha));
    expect(planFaults(3, ha)).not.toEqual(planFaults(3, limits));
  });
});
