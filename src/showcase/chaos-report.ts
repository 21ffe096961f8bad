/**
 * The chaos run's report (issue 17): `artifacts/chaos/<run-id>/report.json` and `report.md`,
 * and the same document on stdout with `--json`. The verdict: the verifier's, except that an
 * exit nobody caused makes it FAIL and a run that could not finish is ERROR.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadChunk } from './chaos-load.js';
import type { ProcessExit, ProcessRecord } from './chaos-supervisor.js';
import type { FaultRecord } from './nemesis.js';
import type { ChaosProcess } from './nemesis-plan.js';

export type ChaosVerdict = 'PASS' | 'FAIL' | 'INCOMPLETE' | 'ERROR';

export interface ChaosReport {
  run_id: string;
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
  error?: string;
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
  };
}

export function writeChaosReport(runDir: string, report: ChaosReport): void {
  writeFileSync(join(runDir, 'report.json'), `${JSON.stringify(reportJson(report), null, 2)}\n`);
  writeFileSync(join(runDir, 'report.md'), reportMarkdown(report));
}

export function reportMarkdown(report: ChaosReport): string {
  const counts = (report.verify?.counts ?? {}) as Record<string, unknown>;
  const s = (x: number | null) => (x === null ? '—' : `${x.toFixed(1)} s`);
  return [
    `# amendsctl chaos ${report.run_id}: ${report.verdict}`,
    '',
    `Seed ${report.seed}, ${report.duration_s} s, outage budget ${report.outage_budget_s} s, load ${report.records_per_second} records/s. Replay: \`${report.replay}\`.`,
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
