/**
 * The result of one benchmark run (docs/design.md#benchmarks gives the minimum shape), the
 * targets judged against it, and the printed table with ratios to the naive baseline. A
 * scale run (`--scale`, issue 13) has a result of its own: its figures under "scale".
 */

import type { AttemptProfile } from './attempt-log-profile.js';
import type { BaselineResult } from './baseline-throughput.js';
import type { CommitFloor } from './commit-floor.js';
import type { FsyncProbe } from './fsync-probe.js';
import type { HopProfile } from './hop-profile.js';
import type { RecoveryResult } from './kill-recovery.js';
import type { KstreamsResult } from './kstreams-throughput.js';
import type { ObservationCost } from './observation-probe.js';
import type { LatencyResult } from './publish-view-latency.js';
import { columns, fixed, whole } from './report-cells.js';
import type { Machine } from './run-environment.js';
import { formatScaleTable, judgeScaleTargets } from './scale-report.js';
import type { ScaleResult } from './scale-run.js';
import { type VerifyFigures, verifyTarget } from './verify-measure.js';
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
    /** The worker's `--batch-size` default and its run's share of the best (null: not in the sweep). */
    default_batch_size: number;
    ratio_default_to_best: number | null;
    naive_rps: number;
    ratio_best_to_naive: number;
    /** The evidence floor and the Connect-style sink (docs/design.md#quality), same backlog and stack. */
    floor_rps: number;
    ratio_best_to_floor: number;
    connect_rps: number;
    ratio_best_to_connect: number;
    /**
     * The Kafka Streams peer (exactly_once_v2) on the same backlog and broker, and amends' best and
     * default batch as multiples of it (the default's null: not in the sweep).
     */
    kstreams_rps: number;
    ratio_best_to_kstreams: number;
    ratio_default_to_kstreams: number | null;
    kstreams: KstreamsResult;
    runs: ThroughputResult[];
    naive: BaselineResult & { poll_size: number; processes: number };
    floor: BaselineResult & { poll_size: number; processes: number };
    connect: BaselineResult & { poll_size: number; processes: number };
  };
  latency_ms: Omit<LatencyResult, 'distribution'> & { hops: HopProfile; load_average_1m: number };
  /** The second, higher offered load (`--latency-high-rps`); null when not measured. */
  latency_high_ms: (Omit<LatencyResult, 'distribution'> & { load_average_1m: number }) | null;
  recovery_s: RecoveryResult;
  /** issue 14: `amendsctl verify` of the largest drained namespace (null if no run drained one). */
  verify: VerifyFigures | null;
  rss_mb_peak: number;
  rss_mb_per_worker_process: number[];
  machine: Machine & { pg_test_fsync: FsyncProbe };
  versions: Record<string, string>;
  targets: TargetVerdict[];
  latency_distribution_ms: number[];
}

/** `npm run bench -- --scale`: the scale phase alone, on its own backlog. */
export interface ScaleBenchResult {
  run_id: string;
  started_at: string;
  finished_at: string;
  scale: ScaleResult;
  machine: Machine;
  versions: Record<string, string>;
  targets: TargetVerdict[];
}

export type AnyBenchResult = BenchResult | ScaleBenchResult;
type Unjudged<R> = R extends unknown ? Omit<R, 'targets'> : never;

export interface TargetVerdict {
  target: string;
  measured: string;
  met: boolean;
}

export function judgeTargets(r: Unjudged<AnyBenchResult>): TargetVerdict[] {
  return 'scale' in r ? judgeScaleTargets(r.scale) : judgeFullTargets(r);
}

function judgeFullTargets(r: Omit<BenchResult, 'targets'>): TargetVerdict[] {
  const t = r.throughput;
  return [
    {
      target: 'batch mode >= 0.8x floor',
      measured: `${fixed(t.ratio_best_to_floor, 2)}x`,
      met: t.ratio_best_to_floor >= 0.8,
    },
    {
      target: 'batch mode >= 0.8x connect',
      measured: `${fixed(t.ratio_best_to_connect, 2)}x`,
      met: t.ratio_best_to_connect >= 0.8,
    },
    {
      target: `default (batch ${t.default_batch_size}) >= 0.9x best`,
      measured: t.ratio_default_to_best === null ? 'not in the sweep' : `${fixed(t.ratio_default_to_best, 2)}x`,
      met: t.ratio_default_to_best !== null && t.ratio_default_to_best >= 0.9,
    },
    {
      target: 'vs kstreams: best batch >= 1.5x',
      measured: `${fixed(t.ratio_best_to_kstreams, 2)}x (${whole(t.best.rps)} / ${whole(t.kstreams_rps)} rec/s)`,
      met: t.ratio_best_to_kstreams >= 1.5,
    },
    {
      target: `vs kstreams: default (batch ${t.default_batch_size}) >= 1.3x`,
      measured: t.ratio_default_to_kstreams === null ? 'not in the sweep' : `${fixed(t.ratio_default_to_kstreams, 2)}x`,
      met: t.ratio_default_to_kstreams !== null && t.ratio_default_to_kstreams >= 1.3,
    },
    {
      target: `p99 publish->view <= 100 ms at 1,000 rec/s`,
      measured: `${fixed(r.latency_ms.p99, 1)} ms at ${whole(r.latency_ms.offered_rps)} rec/s`,
      met: r.latency_ms.p99 <= 100 && r.latency_ms.offered_rps >= 1000,
    },
    {
      target: 'p99 publish->view <= 250 ms at 10,000 rec/s',
      measured:
        r.latency_high_ms === null
          ? 'not measured'
          : `${fixed(r.latency_high_ms.p99, 1)} ms at ${whole(r.latency_high_ms.offered_rps)} rec/s`,
      met: r.latency_high_ms !== null && r.latency_high_ms.p99 <= 250 && r.latency_high_ms.offered_rps >= 10_000,
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
    verifyTarget(r.verify, 200_000, 15),
  ];
}

/** The printed table: every measured figure, its ratio to the baseline, and the targets. */
export function formatTable(r: AnyBenchResult): string {
  return 'scale' in r ? formatScaleTable(r) : formatFullTable(r);
}

/** A target's row cells (its wording, met or MISSED) by the start of its name; blank when absent. */
type TargetCells = (name: string) => string[];

function formatFullTable(r: BenchResult): string {
  const verdict: TargetCells = (name) => {
    const v = r.targets.find((x) => x.target.startsWith(name));
    return v === undefined ? ['', ''] : [v.target, v.met ? 'met' : 'MISSED'];
  };
  return columns([
    ['measure', 'value', 'vs naive', 'target', ''],
    ...throughputRows(r, verdict),
    ...latencyRows(r, verdict),
    ...recoveryRows(r, verdict),
    ...costRows(r, verdict),
  ]);
}

/** ' (default, best)', ' (best)', ' (default)' or nothing. */
function runLabel(batchSize: number, t: BenchResult['throughput']): string {
  const marks = [batchSize === t.default_batch_size ? 'default' : '', batchSize === t.best.batch_size ? 'best' : ''];
  const said = marks.filter((m) => m !== '');
  return said.length === 0 ? '' : ` (${said.join(', ')})`;
}

/** Each run and baseline in records per second, with its ratio to the naive baseline. */
function throughputRows(r: BenchResult, verdict: TargetCells): string[][] {
  const t = r.throughput;
  const ratio = (rps: number) => `${fixed(rps / t.naive_rps, 2)}x`;
  const window = t.batch1_window_s === null ? 'whole backlog' : `first ${t.batch1_window_s} s of commits`;
  const bestRun = t.runs.find((x) => x.batch_size === t.best.batch_size);
  return [
    [
      `worker batch 1, 2 workers (${window}; reference)`,
      `${whole(t.batch1_rps)} rec/s (${whole(t.batch1_rps_per_worker)}/worker)`,
      ratio(t.batch1_rps),
      '',
      '',
    ],
    ...t.runs
      .filter((x) => x.batch_size !== 1)
      .map((run) => [
        `worker batch ${run.batch_size}, 2 workers${runLabel(run.batch_size, t)}`,
        `${whole(run.rps)} rec/s`,
        ratio(run.rps),
        ...(run.batch_size === t.default_batch_size ? verdict('default') : ['', '']),
      ]),
    [
      `evidence floor, poll ${t.floor.poll_size}, 2 consumers`,
      `${whole(t.floor_rps)} rec/s`,
      ratio(t.floor_rps),
      ...verdict('batch mode >= 0.8x floor'),
    ],
    [
      `Connect-style sink, poll ${t.connect.poll_size}, 2 consumers`,
      `${whole(t.connect_rps)} rec/s`,
      ratio(t.connect_rps),
      ...verdict('batch mode >= 0.8x connect'),
    ],
    ...kstreamsRows(t, bestRun, verdict),
    [`naive baseline, poll ${t.naive.poll_size}, 2 consumers`, `${whole(t.naive_rps)} rec/s`, '1.00x', '', ''],
    [
      `  PostgreSQL work per record, batch ${t.best.batch_size} commit`,
      `${fixed(bestRun?.server_work_us_per_record ?? Number.NaN, 1)} us`,
      '',
      '',
      '',
    ],
  ];
}

/** The Kafka Streams peer: its rate and what it cost, beside amends' best run. */
function kstreamsRows(t: BenchResult['throughput'], best: ThroughputResult | undefined, verdict: TargetCells) {
  const k = t.kstreams;
  const bestRss = best === undefined ? Number.NaN : Math.max(...best.peak_rss_mb);
  return [
    [
      `Kafka Streams peer, exactly_once_v2, ${k.threads} stream threads`,
      `${whole(t.kstreams_rps)} rec/s`,
      `${fixed(t.kstreams_rps / t.naive_rps, 2)}x`,
      ...verdict('vs kstreams: best'),
    ],
    [
      `  default batch ${t.default_batch_size} / Kafka Streams`,
      t.ratio_default_to_kstreams === null ? 'not in the sweep' : `${fixed(t.ratio_default_to_kstreams, 2)}x`,
      '',
      ...verdict('vs kstreams: default'),
    ],
    ['  Kafka Streams JVM: peak RSS / CPU', `${fixed(k.peak_rss_mb, 0)} MB / ${fixed(k.cpu_s, 1)} s`, '', '', ''],
    [
      `  amends batch ${t.best.batch_size}, 2 workers: peak RSS per worker / CPU`,
      `${fixed(bestRss, 0)} MB / ${fixed(best?.cpu_s ?? Number.NaN, 1)} s`,
      '',
      '',
      '',
    ],
  ];
}

/** The higher offered load's line, judged by its own target. */
function highLatencyRows(r: BenchResult, verdict: TargetCells): string[][] {
  const h = r.latency_high_ms;
  if (h === null) return [];
  return [
    [
      `publish->view at ${whole(h.offered_rps)} rec/s (achieved ${whole(h.achieved_rps)})`,
      `p50 ${fixed(h.p50, 1)} ms, p99 ${fixed(h.p99, 1)} ms (n=${h.samples})`,
      '',
      ...verdict('p99 publish->view <= 250'),
    ],
  ];
}

/** Publish → view latency, its two halves, and each hop's time per batch. */
function latencyRows(r: BenchResult, verdict: TargetCells): string[][] {
  const l = r.latency_ms;
  const h = l.hops;
  return [
    [
      `publish->view at ${whole(l.offered_rps)} rec/s (batch ${l.batch_size})`,
      `p50 ${fixed(l.p50, 1)} ms, p99 ${fixed(l.p99, 1)} ms (n=${l.samples})`,
      '',
      ...verdict('p99'),
    ],
    [
      '  of which publish->commit / commit->view',
      `p50 ${fixed(l.publish_to_commit_ms.p50, 1)} / ${fixed(l.commit_to_view_ms.p50, 1)} ms, p99 ${fixed(l.publish_to_commit_ms.p99, 1)} / ${fixed(l.commit_to_view_ms.p99, 1)} ms`,
      '',
      '',
      '',
    ],
    [
      '  per batch: worker commit interval / relay cycle / view apply',
      `${fixed(h.worker_commit_interval_ms, 1)} (${fixed(h.worker_records_per_commit, 0)} rec) / ${fixed(h.relay_cycle_p50_ms, 1)} / ${fixed(h.view_apply_p50_ms, 1)} ms`,
      '',
      '',
      '',
    ],
    ...highLatencyRows(r, verdict),
  ];
}

function recoveryRows(r: BenchResult, verdict: TargetCells): string[][] {
  return [
    ['SIGKILL + restart -> frontier moving', `${fixed(r.recovery_s.frontier_moving, 2)} s`, '', ...verdict('restart')],
    ['SIGKILL + restart -> caught up', `${fixed(r.recovery_s.caught_up, 2)} s`, '', '', ''],
    ['SIGKILL, survivor takes over', `${fixed(r.recovery_s.takeover, 2)} s`, '', ...verdict('survivor')],
  ];
}

/** Memory, the disk's sync rate, and what bounds batch size 1. */
function costRows(r: BenchResult, verdict: TargetCells): string[][] {
  const t = r.throughput;
  const fsync = r.machine.pg_test_fsync.fdatasync_ops_per_s;
  const bounds = t.batch1_bounds;
  return [
    ['peak RSS per worker (VmHWM)', `${fixed(r.rss_mb_peak, 0)} MB`, '', ...verdict('peak RSS')],
    ['naive peak RSS per consumer', `${fixed(Math.max(...t.naive.peak_rss_mb), 0)} MB`, '', '', ''],
    ['pg_test_fsync fdatasync (one 8kB write)', fsync === null ? 'n/a' : `${whole(fsync)} ops/s`, '', '', ''],
    [
      'durable one-row commit / source observation',
      `${fixed(bounds.durable_commit_floor.ms_per_commit, 2)} ms (${whole(bounds.durable_commit_floor.commits_per_s)}/s) / p50 ${fixed(bounds.source_observation.p50_ms, 2)} ms`,
      '',
      '',
      '',
    ],
    [
      'batch 1: store call / commit interval',
      `${fixed(t.batch1_profile.store_call_ms.mean, 2)} / ${fixed(t.batch1_profile.commit_interval_ms, 2)} ms (mean)`,
      '',
      '',
      '',
    ],
  ];
}
