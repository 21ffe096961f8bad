/**
 * The scale run's targets (issue 13; docs/benchmarks.md, "The scale run") judged against its
 * result, and its printed table.
 */
import type { ScaleBenchResult, TargetVerdict } from './bench-report.js';
import { readApiTargets } from './read-api-measure.js';
import { columns, fig, whole } from './report-cells.js';
import type { ScaleResult } from './scale-run.js';
import { verifyTarget } from './verify-measure.js';

/** The sizes of issue 13 at which the scale targets are stated: a smaller run cannot meet them. */
export const scaleTargetRecords = 2_000_000;
export const scaleTargetTransactions = 1_000_000;

export function judgeScaleTargets(s: ScaleResult): TargetVerdict[] {
  const atRecords = s.records >= scaleTargetRecords;
  const atHistory = s.transactions >= scaleTargetTransactions;
  const size = `${whole(s.records)} records`;
  const history = `${whole(s.transactions)} transactions`;
  const rssRatio = s.rss_mb_at_reference === null ? null : s.rss_mb_peak / s.rss_mb_at_reference;
  const within = (v: number | null, limit: number) => v !== null && Number.isFinite(v) && v <= limit;
  return [
    {
      target: 'scale: last tenth >= 0.9x the first tenth (2,000,000 records)',
      measured: `${fig(s.ratio_last_to_first, 2)}x (${whole(s.rps_last_tenth)} / ${whole(s.rps_first_tenth)} rec/s) at ${size}`,
      met: atRecords && atHistory && s.ratio_last_to_first !== null && s.ratio_last_to_first >= 0.9,
    },
    {
      target: 'scale: peak RSS per worker <= 250 MB at 2,000,000 records',
      measured: `${fig(s.rss_mb_peak, 0)} MB at ${size}`,
      met: atRecords && s.rss_mb_peak <= 250,
    },
    {
      target: 'scale: peak RSS <= 1.1x its figure at 200,000 records',
      measured: `${fig(rssRatio, 2)}x (${fig(s.rss_mb_peak, 0)} / ${fig(s.rss_mb_at_reference, 0)} MB at ${whole(s.rss_reference_records)})`,
      met: atRecords && s.rss_reference_records === 200_000 && within(rssRatio, 1.1),
    },
    {
      target: 'scale: SIGKILL + restart -> next decision <= 3 s (1,000,000 transactions)',
      measured: `${fig(s.restart_to_decision_s, 2)} s after ${history}`,
      met: atHistory && within(s.restart_to_decision_s, 3),
    },
    {
      target: 'scale: first commit after a claim <= 100 ms (1,000,000 transactions)',
      measured: `${fig(s.first_commit_after_claim_ms, 1)} ms after ${history}`,
      met: atHistory && within(s.first_commit_after_claim_ms, 100),
    },
    verifyTarget(s.verify, scaleTargetRecords, 150),
    ...readApiTargets(s.read_api, atRecords, size),
  ];
}

export function formatScaleTable(r: ScaleBenchResult): string {
  const s = r.scale;
  const rows: string[][] = [['measure', 'value', 'target', '']];
  const verdict = (name: string) => {
    const v = r.targets.find((x) => x.target.startsWith(`scale: ${name}`));
    return v === undefined ? ['', ''] : [v.target.replace(/^scale: /, ''), v.met ? 'met' : 'MISSED'];
  };
  const first = s.tenths.tenths[0];
  const last = s.tenths.tenths[s.tenths.tenths.length - 1];
  const span = (w: typeof first) => (w === undefined ? '' : ` (records ${whole(w.from_record)}-${whole(w.to_record)})`);
  rows.push([
    `scale (${s.shape}) backlog`,
    `${whole(s.records)} records, ${whole(s.transactions)} transactions, ${whole(s.keys)} keys, ${s.partitions} partitions`,
    '',
    '',
  ]);
  rows.push([`  ${s.workers} workers at batch ${s.batch_size}: whole backlog`, `${fig(s.decide_s, 1)} s`, '', '']);
  rows.push([`  decision rate, first tenth${span(first)}`, `${whole(s.rps_first_tenth)} rec/s`, '', '']);
  rows.push([
    `  decision rate, last tenth${span(last)}`,
    `${whole(s.rps_last_tenth)} rec/s (${fig(s.ratio_last_to_first, 2)}x)`,
    ...verdict('last tenth'),
  ]);
  rows.push(['  rate per tenth (rec/s)', s.rps_by_tenth.map((v) => whole(v)).join(' '), '', '']);
  rows.push([
    '  peak RSS per worker (VmHWM)',
    `${s.rss_mb_per_worker.map((w) => `${fig(w.mb, 0)}${w.restarted ? ' (restarted)' : ''}`).join(' / ')} MB`,
    ...verdict('peak RSS per worker'),
  ]);
  rows.push([
    `  peak RSS when ${whole(s.rss_reference_records)} were decided`,
    `${fig(s.rss_mb_at_reference, 0)} MB`,
    ...verdict('peak RSS <='),
  ]);
  const x = s.restart;
  rows.push([
    `  SIGKILL + restart -> next decision (${whole(x.history_transactions)} txns behind)`,
    `${fig(s.restart_to_decision_s, 2)} s${x.failure === null ? '' : ` (${x.failure})`}`,
    ...verdict('SIGKILL'),
  ]);
  rows.push([
    '    restart -> claim / claim -> seek observation',
    `${fig(x.restart_to_claim_s, 2)} s / ${fig(x.claim_to_seek_ms, 1)} ms`,
    '',
    '',
  ]);
  rows.push(['  claim -> first commit', `${fig(s.first_commit_after_claim_ms, 1)} ms`, ...verdict('first commit')]);
  rows.push([
    '    first store call (decide + commit, keys loaded)',
    `${x.first_store_call_ms.map((ms) => fig(ms, 1)).join(' / ')} ms for ${x.first_commit_records.join(' / ')} records`,
    '',
    '',
  ]);
  return columns(rows);
}
