/**
 * The showcase's evidence (docs/design.md#showcase): `report.json`
 * (`{"run_id","verdict","started_at","finished_at","faults":[…],"verify":{…}}`) and a
 * `report.md` a person reads, both under artifacts/showcase/<run-id>/.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildReport } from './showcase-processes.js';
import type { FaultRecord } from './showcase-timeline.js';

export interface ShowcaseReport {
  run_id: string;
  /** The verifier's verdict; ERROR when the showcase failed before it had one. */
  verdict: string;
  started_at: string;
  finished_at: string;
  faults: FaultRecord[];
  verify: Record<string, unknown> | null;
  /** Every child process the showcase started, and how it ended. */
  children: ChildReport[];
  /** Why the showcase stopped early; absent when it ran to the verdict. */
  error?: string;
}

export function writeShowcaseReport(runDir: string, report: ShowcaseReport, timeline: readonly string[]): void {
  writeFileSync(join(runDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(runDir, 'report.md'), showcaseMarkdown(report, timeline));
}

export function showcaseMarkdown(report: ShowcaseReport, timeline: readonly string[]): string {
  const seconds = (f: FaultRecord) =>
    f.recovered_at === null ? '—' : ((Date.parse(f.recovered_at) - Date.parse(f.injected_at)) / 1000).toFixed(2);
  const cell = (s: string) => s.replaceAll('|', '\\|');
  const faults = report.faults.map(
    (f) =>
      `| ${f.kind} | ${cell(f.target)} | ${f.injected_at} | ${seconds(f)} | ${cell(f.observed ?? 'not observed')} |`,
  );
  const verify = report.verify;
  const counts = verify?.counts as Record<string, unknown> | undefined;
  const reasons = (verify?.reasons as unknown[] | undefined) ?? [];
  return [
    `# amends showcase ${report.run_id}: ${report.verdict}`,
    '',
    `Started ${report.started_at}, finished ${report.finished_at}.`,
    ...(report.error === undefined ? [] : ['', `Stopped early: ${report.error}`]),
    '',
    '## Faults and their recovery',
    '',
    '| fault | target | injected at | recovered after (s) | observed |',
    '| --- | --- | --- | --- | --- |',
    ...faults,
    '',
    '## Verifier',
    '',
    verify === null
      ? 'The verifier did not run.'
      : `Verdict **${String(verify.verdict)}**; counts: ${
          counts === undefined
            ? '—'
            : Object.entries(counts)
                .map(([k, v]) => `${k} ${String(v)}`)
                .join(', ')
        }.`,
    ...reasons.map((r) => `- ${String(r)}`),
    '',
    '## Child processes (every one stopped)',
    '',
    ...report.children.map((c) => `- ${c.name} (pid ${c.pid}): ${c.ended}`),
    '',
    '## Timeline',
    '',
    '```',
    ...timeline,
    '```',
    '',
  ].join('\n');
}
