/**
 * The human form of the verifier's report: the verdict first, then why it is not PASS, each
 * source partition's frontier against its end, the counts, and the first differences with
 * what was wanted and what was found. `--json` prints the document itself instead.
 */
import type { VerifyDocument } from '../verify/verify-document.js';

/** How many differences the human report spells out (the JSON lists up to 100). */
export const shownDifferencesMax = 10;

export function renderVerifyReport(d: VerifyDocument, subject: { namespace: string; sourceTopic: string }): string {
  const out: string[] = [];
  out.push(`verify ${subject.namespace} (source ${subject.sourceTopic}): ${d.verdict}`);
  for (const reason of d.reasons) out.push(`  - ${reason}`);
  out.push('');
  const rows = d.partitions.map((p) => [String(p.partition), String(p.frontier), String(p.end)]);
  const headers = ['partition', 'frontier', 'end'];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const cells of [headers, ...rows]) {
    out.push(
      cells
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    );
  }
  out.push('');
  const c = d.counts;
  out.push(
    `records ${c.records} · decisions ${c.decisions} · outputs ${c.outputs} · quarantine ${c.quarantine} · outbox pending ${c.outbox_pending} · view rows ${c.view_rows}`,
  );
  if (d.stats) {
    const t = d.stats.phases_ms;
    out.push(
      `took ${(d.stats.total_ms / 1000).toFixed(1)} s (source ${t.source} ms, store ${t.store} ms, topic ${t.topic} ms, view ${t.view} ms) · ${d.stats.records_per_s} records/s · peak RSS ${d.stats.peak_rss_mb} MB`,
    );
  }
  if (d.differences.length > 0) {
    const shown = d.differences.slice(0, shownDifferencesMax);
    out.push('');
    out.push(`first differences (${shown.length} shown; --json lists up to 100):`);
    for (const diff of shown) {
      out.push(`  ${diff.kind} ${diff.key}`);
      out.push(`    want ${JSON.stringify(diff.want)}`);
      out.push(`    got  ${JSON.stringify(diff.got)}`);
    }
  }
  return `${out.join('\n')}\n`;
}
