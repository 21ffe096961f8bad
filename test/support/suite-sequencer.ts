/**
 * The order in which `npm test` starts its files (issue 31): longest first, so that the files
 * running side by side finish together instead of one long file running alone at the end
 * (longest-processing-time-first scheduling). The lengths are whole-file seconds measured
 * alone on a 2-core machine (one file at a time, 2026-12-07, before issue 31 shrank
 * verify-scale and worker-kill); a file not listed is short
 * and starts after the listed ones, in vitest's own order. Fixed figures rather than vitest's
 * duration cache: CI starts from a clean checkout without that cache, and the same order
 * everywhere makes a slow or failing run comparable with the last one.
 *
 * A new file that takes more than a few seconds belongs in this table.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const measuredFileSeconds: Readonly<Record<string, number>> = {
  // Issue 33: now --database ha; 108-119 s measured beside other work (load average 4-10), not alone.
  'test/integration/chaos.test.ts': 119,
  'test/integration/three-broker-cluster.test.ts': 92,
  'test/integration/bench-smoke.test.ts': 68,
  'test/integration/worker-kill.test.ts': 62,
  'test/integration/verify-scale.test.ts': 60,
  'test/integration/worker-source-validation.test.ts': 52,
  'test/integration/worker-e2e.test.ts': 51,
  'test/integration/database-outage.test.ts': 48,
  'test/integration/transport-faults.test.ts': 40,
  // Measured beside other work (51-55 s at load 1-3, 56-68 s at 4-7), not alone: issue 33's HA
  // database stack, with its two going-back-in-time cases (an asynchronous failover, a restore).
  'test/integration/ha-stack.test.ts': 55,
  'test/simulation/simulation.test.ts': 60,
  'test/e2e/showcase-tui.test.ts': 40,
  // The interrupted run only since the dashboard's run became the suite's one whole showcase
  // (10.6 s beside load 20, alone; the whole run it dropped took 58 s there).
  'test/e2e/showcase.test.ts': 10,
  'test/integration/verify.test.ts': 37,
  'test/integration/source-load.test.ts': 34,
  // Measured under load (8-12), not alone: issue 35 added the schema-9 case and own databases.
  'test/integration/store-upgrade.test.ts': 52,
  'test/integration/database-roles.test.ts': 11,
  'test/integration/inspect-source-status.test.ts': 32,
  'test/integration/transport-e2e.test.ts': 30,
  'test/integration/transport-relay-kills.test.ts': 28,
  'test/integration/rebuild-and-recover.test.ts': 28,
  'test/integration/worker-commit-faults.test.ts': 25,
  'test/integration/kafka-source-consumer.test.ts': 23,
  'test/integration/postgres-state.test.ts': 21,
  'test/integration/kstreams-peer.test.ts': 16,
  'test/integration/observability.test.ts': 21,
  'test/integration/secured-connectivity.test.ts': 19,
  'test/integration/read-only-commands.test.ts': 12,
  'test/integration/wait-drained.test.ts': 12,
  'test/integration/source-load-stops.test.ts': 10,
  'test/integration/verify-patience.test.ts': 25,
  'test/integration/namespace-drop.test.ts': 20,
  'test/tui/dashboard-live.test.tsx': 10,
  'test/model/group-machine.test.ts': 8,
  'test/integration/source-create.test.ts': 8,
  // Beside load 9-10, not alone: two private PostgreSQL stacks (issue 35, item 9).
  'test/integration/stack-postgres.test.ts': 11,
  'test/integration/config-revise.test.ts': 10,
  'test/integration/diagnostics.test.ts': 7,
  'test/integration/metrics-lint.test.ts': 9,
  'test/integration/standard-producers.test.ts': 7,
  'test/integration/source-adopt.test.ts': 6,
  'test/integration/worker-static-fence.test.ts': 5,
  'test/integration/worker-fairness.test.ts': 5,
  // Measured beside other work (load average 4-9), not alone: issue 36's 200,000-record ledger.
  'test/integration/read-api-vs-oracle.test.ts': 55,
  'test/integration/read-api-plans.test.ts': 10,
};

/**
 * Files that take turns at an exclusive resource (exclusive-resource.ts): the second starts
 * where, by the table, the first has ended, so its slot is not spent waiting for the turn.
 */
const startsAfter: Readonly<Record<string, string>> = {
  'test/integration/three-broker-cluster.test.ts': 'test/integration/chaos.test.ts',
};

function pathOf(root: string, spec: TestSpecification): string {
  return spec.moduleId.startsWith(`${root}/`) ? spec.moduleId.slice(root.length + 1) : spec.moduleId;
}

/**
 * Moves each file of `startsAfter` to the first place whose estimated start (the seconds of
 * the files before it, spread over `workers`) is past the estimated end of its predecessor.
 */
function spacedTurns(root: string, files: TestSpecification[], workers: number): TestSpecification[] {
  const out = [...files];
  for (const [late, first] of Object.entries(startsAfter)) {
    const from = out.findIndex((f) => pathOf(root, f) === late);
    const firstAt = out.findIndex((f) => pathOf(root, f) === first);
    if (from < 0 || firstAt < 0) continue;
    const [moved] = out.splice(from, 1) as [TestSpecification];
    const secondsBefore = (i: number) => out.slice(0, i).reduce((sum, f) => sum + secondsOf(root, f), 0);
    const firstEnds = secondsBefore(firstAt) / workers + (measuredFileSeconds[first] ?? 0);
    let at = firstAt + 1;
    while (at < out.length && secondsBefore(at) / workers < firstEnds) at++;
    out.splice(at, 0, moved);
  }
  return out;
}

function secondsOf(root: string, spec: TestSpecification): number {
  return measuredFileSeconds[pathOf(root, spec)] ?? 0;
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const base = await super.sort(files);
    // Array.prototype.sort is stable: files of equal length keep vitest's order.
    const longestFirst = base.sort((a, b) => secondsOf(root, b) - secondsOf(root, a));
    return spacedTurns(root, longestFirst, Math.max(1, this.ctx.config.maxWorkers ?? 1));
  }
}
