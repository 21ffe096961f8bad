/**
 * The verifier's figures for the benchmark (issue 14, docs/design.md#quality): `amendsctl verify --json`
 * of one namespace, run as a user runs it, with its wall time and the `stats` it reports
 * (time per phase, peak RSS of the verify process). A namespace without an output binding
 * (the throughput and scale namespaces) is compared on its source side and outbox only.
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { packageBin } from '../io/process/child-process.js';
import type { VerifyDocument } from '../verify/verify-document.js';
import type { BenchContext } from './bench-context.js';
import type { TargetVerdict } from './bench-report.js';
import { fixed, whole } from './report-cells.js';

export interface VerifyFigures {
  namespace: string;
  records: number;
  verdict: string;
  wall_s: number;
  records_per_s: number;
  peak_rss_mb: number;
  phases_ms: Record<string, number> | null;
  load_average_1m: number;
}

/** How long one verify may take (the scale run's 2,000,000 records: the target is 150 s). */
const verifyTimeoutMs = 900_000;

export function measureVerify(ctx: BenchContext, manifestPath: string, namespace: string): VerifyFigures {
  const started = Date.now();
  const r = spawnSync(packageBin('amendsctl'), ['verify', '--manifest', manifestPath, '--json'], {
    env: ctx.env,
    encoding: 'utf8',
    timeout: verifyTimeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallS = (Date.now() - started) / 1000;
  let report: VerifyDocument;
  try {
    report = JSON.parse(r.stdout) as VerifyDocument;
  } catch {
    throw new Error(`verify of ${namespace} exited ${r.status} without a report: ${r.stderr.trim()}`);
  }
  const records = report.counts?.records ?? 0;
  return {
    namespace,
    records,
    verdict: report.verdict,
    wall_s: wallS,
    records_per_s: wallS > 0 ? Math.round(records / wallS) : 0,
    peak_rss_mb: report.stats?.peak_rss_mb ?? Number.NaN,
    phases_ms: report.stats?.phases_ms ?? null,
    load_average_1m: Math.round((os.loadavg()[0] ?? Number.NaN) * 100) / 100,
  };
}

/** issue 14: verify of a drained namespace of `records` records within `limitS`, peak RSS <= 300 MB. */
export function verifyTarget(v: VerifyFigures | null, records: number, limitS: number): TargetVerdict {
  const measured = v
    ? `${v.verdict} ${whole(v.records)} records in ${fixed(v.wall_s, 1)} s (${whole(v.records_per_s)} rec/s), ${fixed(v.peak_rss_mb, 0)} MB, load ${fixed(v.load_average_1m, 2)}`
    : 'not measured';
  return {
    target: `verify of ${whole(records)} records <= ${limitS} s, peak RSS <= 300 MB`,
    measured,
    met: v !== null && v.records >= records && v.wall_s <= limitS && v.peak_rss_mb <= 300,
  };
}
