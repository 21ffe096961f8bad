/**
 * `amendsctl chaos` for 60 s (issue 17): a private 3-broker cluster and PostgreSQL of its
 * own, two workers, a relay and a view under its supervisor, seeded load and faults; it must
 * end in PASS after at least six faults of four kinds, a broker and a database fault among
 * them, with no process exiting except by a fault that kills it.
 *
 * The seed is printed; AMENDS_TEST_CHAOS_SEED replays another (the same plan of faults and
 * load: `amendsctl chaos --duration 60 --seed N`).
 */

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, requireBuild, runChild } from '../support/amendsctl-process.js';
import { holdExclusive, privateClusterResource } from '../support/exclusive-resource.js';

const seed = Number(process.env.AMENDS_TEST_CHAOS_SEED ?? 7);
/** The 3-broker suite's whole file, which holds the turn at the private cluster meanwhile. */
const clusterFileMaxMs = 300_000;

interface ChaosDocument {
  verdict: string;
  reasons: string[];
  faults_injected: number;
  fault_kinds: Record<string, number>;
  unexpected_exits: unknown[];
  processes: Record<string, { starts: number; unexpected_exits: number }>;
  verify: { verdict: string; counts: Record<string, number> } | null;
  drain_s: number | null;
}

describe('amendsctl chaos', () => {
  it(
    '60 s of seeded faults on a private 3-broker cluster ends in PASS',
    async () => {
      requireBuild();
      console.log(`chaos seed ${seed} (replay: amendsctl chaos --duration 60 --seed ${seed})`);
      const args = ['chaos', '--duration', '60', '--seed', String(seed), '--json'];
      // Its cluster and the 3-broker suite's never start side by side (exclusive-resource.ts).
      const turn = await holdExclusive(privateClusterResource, clusterFileMaxMs);
      const run = await runChild(process.execPath, [join(repoRoot, 'bin', 'amendsctl'), ...args], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' },
        timeoutMs: 700_000,
        label: `amendsctl ${args.join(' ')}`,
      }).finally(() => turn.release());
      const report = JSON.parse(run.stdout) as ChaosDocument;
      const kinds = Object.keys(report.fault_kinds);
      console.log(
        `chaos: ${report.verdict}; ${report.faults_injected} faults (${kinds.join(', ')}); starts ${Object.entries(
          report.processes,
        )
          .map(([n, p]) => `${n} ${p.starts}`)
          .join(', ')}; drained in ${report.drain_s} s; verify ${JSON.stringify(report.verify?.counts)}`,
      );
      expect(report.reasons, run.stderr.slice(-3000)).toEqual([]);
      expect(report.verdict).toBe('PASS');
      expect(run.code).toBe(0);
      expect(report.faults_injected).toBeGreaterThanOrEqual(6);
      expect(kinds.length).toBeGreaterThanOrEqual(4);
      expect(kinds).toContain('broker-kill');
      expect(kinds.some((k) => k.startsWith('db-'))).toBe(true);
      expect(report.unexpected_exits).toEqual([]);
      expect(report.verify?.counts.records).toBeGreaterThan(1_000);
    },
    clusterFileMaxMs + 720_000,
  );
});
