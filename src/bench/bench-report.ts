/**
 * The result of one benchmark run (quality.md "Benchmarks" gives the minimum shape), the
 * targets judged against it, and the printed table with ratios to the naive baseline.
 */
import type { AttemptProfile } from './attempt-log-profile.js';
import type { CommitFloor } from './commit-floor.js';
import type { FsyncProbe } from './fsync-probe.js';
import type { HopProfile } from './hop-profile.js';
import type { RecoveryResult } from './kill-recovery.js';
import type { NaiveResult } from './naive-throughput.js';
import type { ObservationCost } from './observation-probe.js';
import type { LatencyResult } from './publish-view-latency.js';
import type { Machine } from './run-environment.js';
import type { ThroughputResult } from './worker-throughput.js';

export interface BenchResult {
  run_id: string;
  started_at: string;
  finished_at: string;
  backlog: { records: number; partitions: number; publish_s: number; publish_rps: number };
  throughput: {
    batch1_rps: number;
    batch1_rps_per_worker: number;
    /** Batch size 1 decides only a prefix of the backlog: this many seconds of commits. */
    batch1_window_s: number | null;
    batch1_profile: AttemptProfile;
    /** Measured right after the batch-1 run: what one record's cycle cannot go below. */
    batch1_bounds: { durable_commit_floor: CommitFloor; source_observation: ObservationCost };
    best: { batch_size: number; rps: number; rps_per_worker: number };
    naive_rps: number;
    ratio_best_to_naive: number;
    runs: ThroughputResult[];
    naive: NaiveResult & { poll_size: number; processes: number };
  };
  latency_ms: Omit<LatencyResult, 'distribution'> & { hops: HopProfile; load_average_1m: number };
  recovery_s: RecoveryResult;
  rss_mb_peak: number;
  rss_mb_per_worker_process: number[];
  machine: Machine & { pg_test_fsync: FsyncProbe };
  versions: Record<string, string>;
  targets: TargetVerdict[];
  latency_distribution_ms: number[];
}

export interface TargetVerdict {
  target: string;
  measured: string;
  met: boolean;
}

export function judgeTargets(r: Omit<BenchResult, 'targets'>): TargetVerdict[] {
  const t = r.throughput;
  return [
    {
      target: 'batch mode >= 0.8x naive',
      measured: `${fixed(t.ratio_best_to_naive, 2)}x`,
      met: t.ratio_best_to_naive >= 0.8,
    },
    {
      target: 'batch 1 >= 1,000 rec/s per worker',
      measured: `${whole(t.batch1_rps_per_worker)} rec/s`,
      met: t.batch1_rps_per_worker >= 1000,
    },
    {
      target: `p99 publish->view <= 100 ms at 1,000 rec/s`,
      measured: `${fixed(r.latency_ms.p99, 1)} ms at ${whole(r.latency_ms.offered_rps)} rec/s`,
      met: r.latency_ms.p99 <= 100 && r.latency_ms.offered_rps >= 1000,
    },
    {
      target: 'restart -> moving frontier <= 3 s',
      measured: `${fixed(r.recovery_s.frontier_moving, 2)} s`,
      met: r.recovery_s.frontier_moving <= 3,
    },
    {
      target: 'survivor takeover <= 10 s',
      measured: `${fixed(r.recovery_s.takeover, 2)} s`,
      met: r.recovery_s.takeover <= 10,
    },
    { target: 'peak RSS per worker <= 250 MB', measured: `${fixed(r.rss_mb_peak, 0)} MB`, met: r.rss_mb_peak <= 250 },
  ];
}

/** The printed table: every measured figure, its ratio to the baseline, and the targets. */
export function formatTable(r: BenchResult): string {
  const t = r.throughput;
  const ratio = (rps: number) => `${fixed(rps / t.naive_rps, 2)}x`;
  const rows: string[][] = [['measure', 'value', 'vs naive', 'target', '']];
  const verdict = (name: string) => {
    const v = r.targets.find((x) => x.target.startsWith(name));
    return v === undefined ? ['', ''] : [v.target, v.met ? 'met' : 'MISSED'];
  };
  const window = t.batch1_window_s === null ? 'whole backlog' : `first ${t.batch1_window_s} s of commits`;
  rows.push([
    `worker batch 1, 2 workers (${window})`,
    `${whole(t.batch1_rps)} rec/s (${whole(t.batch1_rps_per_worker)}/worker)`,
    ratio(t.batch1_rps),
    ...verdict('batch 1'),
  ]);
  for (const run of t.runs.filter((x) => x.batch_size !== 1)) {
    const best = run.batch_size === t.best.batch_size;
    rows.push([
      `worker batch ${run.batch_size}, 2 workers${best ? ' (best)' : ''}`,
      `${whole(run.rps)} rec/s`,
      ratio(run.rps),
      ...(best ? verdict('batch mode') : ['', '']),
    ]);
  }
  rows.push([`naive baseline, poll ${t.naive.poll_size}, 2 consumers`, `${whole(t.naive_rps)} rec/s`, '1.00x', '', '']);
  const bestRun = t.runs.find((x) => x.batch_size === t.best.batch_size);
  rows.push([
    `  PostgreSQL work per record, batch ${t.best.batch_size} commit`,
    `${fixed(bestRun?.server_work_us_per_record ?? Number.NaN, 1)} us`,
    '',
    '',
    '',
  ]);
  rows.push([
    `publish->view at ${whole(r.latency_ms.offered_rps)} rec/s (batch ${r.latency_ms.batch_size})`,
    `p50 ${fixed(r.latency_ms.p50, 1)} ms, p99 ${fixed(r.latency_ms.p99, 1)} ms (n=${r.latency_ms.samples})`,
    '',
    ...verdict('p99'),
  ]);
  rows.push([
    '  of which publish->commit / commit->view',
    `p50 ${fixed(r.latency_ms.publish_to_commit_ms.p50, 1)} / ${fixed(r.latency_ms.commit_to_view_ms.p50, 1)} ms, p99 ${fixed(r.latency_ms.publish_to_commit_ms.p99, 1)} / ${fixed(r.latency_ms.commit_to_view_ms.p99, 1)} ms`,
    '',
    '',
    '',
  ]);
  const h = r.latency_ms.hops;
  rows.push([
    '  per batch: worker commit interval / relay cycle / view apply',
    `${fixed(h.worker_commit_interval_ms, 1)} (${fixed(h.worker_records_per_commit, 0)} rec) / ${fixed(h.relay_cycle_p50_ms, 1)} / ${fixed(h.view_apply_p50_ms, 1)} ms`,
    '',
    '',
    '',
  ]);
  rows.push([
    'SIGKILL + restart -> frontier moving',
    `${fixed(r.recovery_s.frontier_moving, 2)} s`,
    '',
    ...verdict('restart'),
  ]);
  rows.push(['SIGKILL + restart -> caught up', `${fixed(r.recovery_s.caught_up, 2)} s`, '', '', '']);
  rows.push(['SIGKILL, survivor takes over', `${fixed(r.recovery_s.takeover, 2)} s`, '', ...verdict('survivor')]);
  rows.push(['peak RSS per worker (VmHWM)', `${fixed(r.rss_mb_peak, 0)} MB`, '', ...verdict('peak RSS')]);
  rows.push(['naive peak RSS per consumer', `${fixed(Math.max(...t.naive.peak_rss_mb), 0)} MB`, '', '', '']);
  const fsync = r.machine.pg_test_fsync.fdatasync_ops_per_s;
  rows.push(['pg_test_fsync fdatasync (one 8kB write)', fsync === null ? 'n/a' : `${whole(fsync)} ops/s`, '', '', '']);
  const bounds = t.batch1_bounds;
  rows.push([
    'durable one-row commit / source observation',
    `${fixed(bounds.durable_commit_floor.ms_per_commit, 2)} ms (${whole(bounds.durable_commit_floor.commits_per_s)}/s) / p50 ${fixed(bounds.source_observation.p50_ms, 2)} ms`,
    '',
    '',
    '',
  ]);
  rows.push([
    'batch 1: store call / commit interval',
    `${fixed(t.batch1_profile.store_call_ms.mean, 2)} / ${fixed(t.batch1_profile.commit_interval_ms, 2)} ms (mean)`,
    '',
    '',
    '',
  ]);
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length))) ?? [];
  const line = (row: string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0] as string[]), rule, ...rows.slice(1).map(line)].join('\n');
}

function whole(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en') : String(n);
}

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}
