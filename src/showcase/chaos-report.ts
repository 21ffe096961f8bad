/**
 * The chaos run's report (issue 17): `artifacts/chaos/<run-id>/report.json` and `report.md`,
 * and the same document on stdout with `--json`. The verdict: the verifier's, except that an
 * exit nobody caused makes it FAIL and a run that could not finish is ERROR. Beside it (issue
 * 33), each database fault's write unavailability and how every unknown commit outcome was
 * resolved: figures, not part of the verdict.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadChunk } from './chaos-load.js';
import type { ProcessExit, ProcessRecord } from './chaos-supervisor.js';
import type { FaultRecord } from './nemesis.js';
import type { ChaosDatabase, ChaosProcess } from './nemesis-plan.js';
import type { UnknownOutcomeSummary } from './unknown-outcomes.js';

export type ChaosVerdict = 'PASS' | 'FAIL' | 'INCOMPLETE' | 'ERROR';

export interface ChaosReport {
  run_id: string;
  database: ChaosDatabase;
  seed: number;
  duration_s: number;
  outage_budget_s: number;
  records_per_second: number;
  started_at: string;
  finished_at: string;
  verdict: ChaosVerdict;
  reasons: string[];
  replay: string;
  stack: { brokers: string; database: string; dir: string } | null;
  faults: FaultRecord[];
  load: LoadChunk[];
  load_summary: { lines: number; unknown: number; failedChunks: number } | null;
  supervisor: Map<ChaosProcess, ProcessRecord>;
  unexpected_exits: ({ process: ChaosProcess } & ProcessExit)[];
  drain_s: number | null;
  verify: Record<string, unknown> | null;
  unknown_outcomes: UnknownOutcomeSummary | null;
  error?: string;
}

/** One database fault's write unavailability (nemesis.ts, write-probe.ts). */
export interface UnavailabilityRow {
  n: number;
  kind: string;
  /** `node-1 -> node-2` for a failover, '' otherwise. */
  nodes: string;
  first_commit_s: number | null;
  longest_gap_s: number | null;
  amends_first_commit_s: number | null;
  /** A failover's old primary back as the synchronous standby, seconds after the fault. */
  rejoined_after_s: number | null;
}

/** The write unavailability of every database fault that was injected. */
export function unavailability(report: ChaosReport): UnavailabilityRow[] {
  return report.faults.flatMap((f) => {
    if (f.writes === null || f.injected_s === null) return [];
    const failover = f.failover;
    return [
      {
        n: f.n,
        kind: f.kind,
        nodes: failover === null ? '' : `${failover.from} -> ${failover.to ?? 'none'}`,
        first_commit_s: f.writes.first_commit_s,
        longest_gap_s: f.writes.longest_gap_s,
        amends_first_commit_s: f.writes.amends_first_commit_s,
        rejoined_after_s: failover?.rejoined_s == null ? null : round1(failover.rejoined_s - (f.injected_s as number)),
      },
    ];
  });
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** `12.3 s`, or — when it never happened. */
export function seconds(x: number | null): string {
  return x === null ? '—' : `${x.toFixed(1)} s`;
}

/** One line per database fault, for the summary and report.md. */
export function unavailabilityLine(r: UnavailabilityRow): string {
  return `fault ${r.n} ${r.kind}${r.nodes ? ` (${r.nodes})` : ''}: first commit after ${seconds(r.first_commit_s)}, longest pause ${seconds(r.longest_gap_s)}, amends' first commit after ${seconds(r.amends_first_commit_s)}${r.rejoined_after_s === null ? '' : `, old primary rejoined after ${seconds(r.rejoined_after_s)}`}`;
}

/** The verdict and its reasons, from what the run saw. */
export function judge(report: ChaosReport): { verdict: ChaosVerdict; reasons: string[] } {
  if (report.error !== undefined) return { verdict: 'ERROR', reasons: [report.error] };
  const verify = report.verify;
  const verdict = String(verify?.verdict ?? 'ERROR');
  const reasons = ((verify?.reasons as string[] | undefined) ?? []).map((r) => `verify: ${r}`);
  const exits = report.unexpected_exits.map(
    (e) =>
      `${e.process} exited at ${e.at_s.toFixed(1)} s (${e.signal ?? `code ${e.code}`}) without a fault that kills it: ${e.last_lines}`,
  );
  // docs/design.md#transport, #worker: SIGTERM drains, then exit 0.
  for (const [name, r] of report.supervisor) {
    for (const e of r.exits) {
      if (e.cause === 'stop' && e.code !== 0)
        exits.push(`${name} ended ${e.signal ?? `with code ${e.code}`} on SIGTERM: ${e.last_lines}`);
    }
  }
  if (report.drain_s === null) reasons.push('the chain did not drain within the drain budget');
  if (verdict === 'ERROR') return { verdict: 'ERROR', reasons: [...reasons, ...exits] };
  if (verdict === 'FAIL' || exits.length > 0) return { verdict: 'FAIL', reasons: [...reasons, ...exits] };
  if (verdict !== 'PASS' || report.drain_s === null) return { verdict: 'INCOMPLETE', reasons };
  return { verdict: 'PASS', reasons };
}

/** The report as JSON (the supervisor's map as an object). */
export function reportJson(report: ChaosReport): Record<string, unknown> {
  const kinds: Record<string, number> = {};
  for (const f of report.faults) if (f.injected_s !== null) kinds[f.kind] = (kinds[f.kind] ?? 0) + 1;
  return {
    ...report,
    supervisor: undefined,
    processes: Object.fromEntries(
      [...report.supervisor].map(([name, r]) => [
        name,
        { starts: r.starts, exits: r.exits, unexpected_exits: r.exits.filter((e) => e.cause === null).length },
      ]),
    ),
    faults_injected: report.faults.filter((f) => f.injected_s !== null).length,
    fault_kinds: kinds,
    write_unavailability: unavailability(report),
  };
}

export function writeChaosReport(runDir: string, report: ChaosReport): void {
  writeFileSync(join(runDir, 'report.json'), `${JSON.stringify(reportJson(report), null, 2)}\n`);
  writeFileSync(join(runDir, 'report.md'), reportMarkdown(report));
}

/** How many unknown outcomes, and what resolved them. */
export function unknownLine(u: UnknownOutcomeSummary | null): string {
  if (u === null) return 'not counted (the run did not finish)';
  return `${u.count} unknown commit outcomes: ${u.by.observed} re-observed (recovery read), ${u.by.ride} by the fresh claims after a ride, ${u.by.restart} by the next process's claim, ${u.by.unresolved} unresolved`;
}

export function reportMarkdown(report: ChaosReport): string {
  const counts = (report.verify?.counts ?? {}) as Record<string, unknown>;
  const s = seconds;
  return [
    `# amendsctl chaos ${report.run_id}: ${report.verdict}`,
    '',
    `Database ${report.database}, seed ${report.seed}, ${report.duration_s} s, outage budget ${report.outage_budget_s} s, load ${report.records_per_second} records/s. Replay: \`${report.replay}\`.`,
    '',
    ...report.reasons.map((r) => `- ${r}`),
    ...(report.reasons.length > 0 ? [''] : []),
    '## Faults',
    '',
    '| # | kind | target | injected | healed | what |',
    '| --- | --- | --- | --- | --- | --- |',
    ...report.faults.map(
      (f) =>
        `| ${f.n} | ${f.kind} | ${f.target} | ${s(f.injected_s)} | ${s(f.healed_s)} | ${f.detail}${f.error ? ` (error: ${f.error})` : ''} |`,
    ),
    '',
    '## Processes',
    '',
    '| process | starts | exits (cause) | unexpected |',
    '| --- | --- | --- | --- |',
    ...[...report.supervisor].map(
      ([name, r]) =>
        `| ${name} | ${r.starts} | ${r.exits.map((e) => `${e.signal ?? `code ${e.code}`} at ${e.at_s.toFixed(1)} s (${e.cause ?? 'none'})`).join('; ') || '—'} | ${r.exits.filter((e) => e.cause === null).length} |`,
    ),
    '',
    '## Write unavailability',
    '',
    'Fault → the first commit of the write probe after it (on the new primary, for a failover); the longest pause between two probe commits; fault → the first commit of an amends worker there.',
    '',
    ...unavailability(report).map((r) => `- ${unavailabilityLine(r)}`),
    '',
    '## Unknown commit outcomes',
    '',
    unknownLine(report.unknown_outcomes),
    '',
    '## Load, drain, verify',
    '',
    `- load: ${report.load.length} chunks; ${report.load_summary?.lines ?? 0} lines published, ${report.load_summary?.unknown ?? 0} in ${report.load_summary?.failedChunks ?? 0} failed chunks (may or may not be on the topic)`,
    `- drained in ${s(report.drain_s)}`,
    `- verify: ${String(report.verify?.verdict ?? '—')}; ${Object.entries(counts)
      .map(([k, v]) => `${k} ${String(v)}`)
      .join(', ')}`,
    '',
  ].join('\n');
}
