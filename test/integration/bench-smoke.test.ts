/**
 * The benchmark harness end to end on a tiny backlog (quality.md "Benchmarks": a smoke test
 * in npm test): every phase runs on the real stack, and the result must be well-formed —
 * every field present, figures finite and positive where they must be, targets judged, the
 * SVG a well-formed <svg> document. The scale run (`--scale`, both shapes) likewise, on
 * 2,000 records. No timing is asserted: these figures are from a tiny, shared machine and
 * mean nothing.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchResult, ScaleBenchResult } from '../../src/bench/bench-report.js';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl } from '../support/endpoints.js';
import { wellFormedXmlRoot } from '../support/xml-well-formed.js';

const outDir = mkdtempSync(join(tmpdir(), 'amends-bench-smoke-'));
const runId = `smoke-${Date.now().toString(36)}`;

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repoRoot, 'dist', 'bench', 'main.js'), ...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', AMENDS_BROKERS: testBrokers, AMENDS_DATABASE_URL: testDatabaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function positive(value: unknown, what: string): void {
  expect(typeof value, what).toBe('number');
  expect(Number.isFinite(value), `${what} is finite`).toBe(true);
  expect(value as number, what).toBeGreaterThan(0);
}

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('npm run bench on a tiny backlog', () => {
  it('writes a well-formed result JSON, a table and an SVG chart', { timeout: 150_000 }, async () => {
    requireBuild();
    const run = await runBench([
      ...['--records', '2000', '--batch-sizes', '500', '--batch1-window-s', '2'],
      ...['--latency-rps', '200', '--latency-high-rps', '400', '--latency-s', '2', '--warmup-s', '1'],
      ...['--steady-s', '1', '--fsync-s', '1', '--out', outDir, '--run-id', runId],
    ]);
    expect(run.code, run.stderr).toBe(0);

    const jsonPath = join(outDir, `${runId}.json`);
    const r = JSON.parse(readFileSync(jsonPath, 'utf8')) as BenchResult;
    expect(r.run_id).toBe(runId);
    expect(r.backlog.records).toBe(2000);
    expect(r.backlog.partitions).toBe(2);

    const t = r.throughput;
    positive(t.batch1_rps, 'batch1_rps');
    positive(t.batch1_rps_per_worker, 'batch1_rps_per_worker');
    expect(t.best.batch_size).toBe(500);
    positive(t.best.rps, 'best.rps');
    positive(t.naive_rps, 'naive_rps');
    positive(t.ratio_best_to_naive, 'ratio_best_to_naive');
    expect(t.ratio_best_to_naive).toBeCloseTo(t.best.rps / t.naive_rps, 6);
    expect(t.runs.map((x) => x.batch_size)).toEqual([1, 500]);
    // The batch-500 run decided the whole backlog, each record exactly once.
    expect(t.runs[1]?.records).toBe(2000);
    expect(t.runs[1]?.bounded_window_s).toBeNull();
    expect(t.naive.records).toBeGreaterThanOrEqual(2000);
    for (const [name, baseline, rps, ratio] of [
      ['floor', t.floor, t.floor_rps, t.ratio_best_to_floor],
      ['connect', t.connect, t.connect_rps, t.ratio_best_to_connect],
    ] as const) {
      positive(rps, `${name}_rps`);
      expect(baseline.records, name).toBeGreaterThanOrEqual(2000);
      expect(ratio, name).toBeCloseTo(t.best.rps / rps, 6);
    }
    // The Kafka Streams peer over the same backlog: every record committed, its costs read.
    const k = t.kstreams;
    positive(t.kstreams_rps, 'kstreams_rps');
    expect(k.rps).toBe(t.kstreams_rps);
    expect(k.threads).toBe(2);
    // 2,000 records may commit in one reading (then the clock starts at the peer's RUNNING state).
    expect(['first_to_last_commit', 'running_to_drained']).toContain(k.clock);
    expect(k.records).toBeGreaterThan(0);
    expect(k.records).toBeLessThanOrEqual(2000);
    positive(k.seconds, 'kstreams seconds');
    positive(k.peak_rss_mb, 'kstreams peak RSS');
    positive(k.cpu_s, 'kstreams CPU seconds');
    expect(t.ratio_best_to_kstreams).toBeCloseTo(t.best.rps / t.kstreams_rps, 6);
    const defaultRun = t.runs.find((x) => x.batch_size === t.default_batch_size);
    if (defaultRun === undefined) expect(t.ratio_default_to_kstreams).toBeNull();
    else expect(t.ratio_default_to_kstreams).toBeCloseTo(defaultRun.rps / t.kstreams_rps, 6);
    for (const run of t.runs) positive(run.cpu_s, `batch ${run.batch_size} CPU seconds`);
    positive(t.batch1_profile.store_call_ms.mean, 'batch1 store call');
    positive(t.batch1_bounds.durable_commit_floor.ms_per_commit, 'durable commit floor');
    positive(t.batch1_bounds.source_observation.p50_ms, 'source observation');
    positive(t.runs[1]?.server_work_us_per_record, 'server work per record');

    const l = r.latency_ms;
    expect(l.offered_rps).toBe(200);
    positive(l.p50, 'latency p50');
    positive(l.p99, 'latency p99');
    expect(l.p99).toBeGreaterThanOrEqual(l.p50);
    expect(l.samples).toBe(r.latency_distribution_ms.length);
    positive(l.hops.worker_commit_interval_ms, 'worker commit interval');
    positive(l.hops.relay_cycle_p50_ms, 'relay cycle');
    positive(l.hops.view_apply_p50_ms, 'view apply');
    positive(l.samples, 'latency samples');
    // The second, higher load: the same figures, judged by its own target.
    const high = r.latency_high_ms;
    expect(high?.offered_rps).toBe(400);
    positive(high?.p50, 'high-load latency p50');
    expect(high?.p99).toBeGreaterThanOrEqual(high?.p50 ?? Number.NaN);
    positive(high?.samples, 'high-load latency samples');
    expect(r.targets.map((t) => t.target)).toContain('p99 publish->view <= 250 ms at 10,000 rec/s');

    const rec = r.recovery_s;
    positive(rec.frontier_moving, 'frontier_moving');
    expect(rec.caught_up).toBeGreaterThanOrEqual(rec.frontier_moving);
    positive(rec.takeover, 'takeover');

    positive(r.rss_mb_peak, 'rss_mb_peak');
    // Two batch-1 workers, two batch-500 workers, two live workers and the restarted one.
    expect(r.rss_mb_per_worker_process).toHaveLength(7);
    positive(r.machine.cpus, 'machine.cpus');
    positive(r.machine.pg_test_fsync.fdatasync_ops_per_s, 'fdatasync ops/s');
    for (const name of ['node', 'postgresql', 'librdkafka', '@confluentinc/kafka-javascript', 'vega-lite']) {
      expect(typeof r.versions[name], name).toBe('string');
    }
    // issue 14: the verifier on the largest drained namespace (the batch-500 run).
    expect(r.verify?.verdict).toBe('PASS');
    expect(r.verify?.records).toBe(r.backlog.records);
    positive(r.verify?.records_per_s as number, 'verify records/s');
    positive(r.verify?.peak_rss_mb as number, 'verify peak RSS');
    expect(r.targets).toHaveLength(11);
    for (const target of r.targets) expect(typeof target.met).toBe('boolean');

    expect(run.stdout).toContain('naive baseline');
    expect(run.stdout).toContain('evidence floor');
    expect(run.stdout).toContain('Connect-style sink');
    expect(run.stdout).toContain('Kafka Streams peer');
    expect(run.stdout).toMatch(/met|MISSED/);

    const svgPath = join(outDir, `${runId}.svg`);
    expect(existsSync(svgPath)).toBe(true);
    const svg = readFileSync(svgPath, 'utf8');
    expect(wellFormedXmlRoot(svg)).toBe('svg');
    expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"');
    expect(svg).toContain('naive baseline');
    expect(svg).toContain('evidence floor');
    expect(svg).toContain('Kafka Streams EOS v2');
  });
});

describe('npm run bench -- --scale on a tiny backlog', () => {
  const shapes = [
    { shape: 'narrow', keys: 2, partitions: 2, workers: 2 },
    { shape: 'wide', keys: 2000, partitions: 8, workers: 4 },
  ] as const;
  for (const { shape, keys, partitions, workers } of shapes) {
    it(`${shape}: writes a well-formed "scale" result, a table and an SVG chart`, { timeout: 90_000 }, async () => {
      requireBuild();
      const id = `${runId}-scale-${shape}`;
      const run = await runBench([
        ...['--scale', '--scale-shape', shape, '--scale-records', '2000', '--scale-batch-size', '100'],
        ...['--out', outDir, '--run-id', id],
      ]);
      expect(run.code, run.stderr).toBe(0);

      const r = JSON.parse(readFileSync(join(outDir, `${id}.json`), 'utf8')) as ScaleBenchResult;
      expect(r.run_id).toBe(id);
      const s = r.scale;
      expect(s.shape).toBe(shape);
      expect(s.records).toBe(2000);
      expect(s.keys).toBe(keys);
      expect(s.partitions).toBe(partitions);
      expect(s.workers).toBe(workers);
      expect(s.batch_size).toBe(100);
      positive(s.transactions, 'transactions');
      expect(s.transactions).toBeLessThanOrEqual(2000);
      // Every record of the backlog decided once, by acknowledged commits the logs show.
      expect(s.tenths.records).toBe(2000);
      positive(s.rps_first_tenth, 'rps_first_tenth');
      positive(s.rps_last_tenth, 'rps_last_tenth');
      positive(s.ratio_last_to_first, 'ratio_last_to_first');
      expect(s.rps_by_tenth).toHaveLength(10);
      expect(s.per_partition.map((p) => p.partition)).toEqual([...Array(partitions).keys()]);
      expect(s.per_partition.reduce((a, p) => a + p.records, 0)).toBe(2000);

      positive(s.rss_mb_peak, 'rss_mb_peak');
      positive(s.rss_mb_at_reference, 'rss_mb_at_reference');
      expect(s.rss_reference_records).toBe(200);
      expect(s.rss_mb_by_tenth).toHaveLength(10);
      // The workers and the restarted one.
      expect(s.rss_mb_per_worker).toHaveLength(workers + 1);
      expect(s.rss_mb_per_worker.filter((w) => w.restarted)).toHaveLength(1);

      expect(s.restart.failure).toBeNull();
      positive(s.restart_to_decision_s, 'restart_to_decision_s');
      positive(s.first_commit_after_claim_ms, 'first_commit_after_claim_ms');
      positive(s.restart.restart_to_claim_s, 'restart_to_claim_s');
      positive(s.restart.history_transactions, 'history_transactions');
      expect(s.restart.first_store_call_ms.length).toBe(s.restart.partitions.length);

      // The restart's tail may still be deciding when the workers stop: PASS or INCOMPLETE, never FAIL.
      expect(['PASS', 'INCOMPLETE']).toContain(s.verify.verdict);
      expect(s.verify.records).toBeGreaterThanOrEqual(s.records);
      positive(s.verify.peak_rss_mb, 'scale verify peak RSS');
      // issue 36: explain and balances on the scale namespace.
      positive(s.read_api.explain.contributions, 'explain contributions');
      positive(s.read_api.explain.now_ms.median, 'explain ms');
      positive(s.read_api.balances_key_year.rows, 'balances of a key year');
      positive(s.read_api.balances_namespace.rows, 'balances of the namespace');
      positive(s.read_api.balances_namespace.peak_rss_mb, 'balances peak RSS');
      expect(r.targets).toHaveLength(9);
      for (const target of r.targets) {
        expect(typeof target.met).toBe('boolean');
        // 2,000 records are not the size: no scale target can be met.
        expect(target.met, target.target).toBe(false);
      }
      positive(r.machine.cpus, 'machine.cpus');
      expect(typeof r.versions.postgresql).toBe('string');

      expect(run.stdout).toContain('decision rate, last tenth');
      expect(run.stdout).toContain('MISSED');

      const svg = readFileSync(join(outDir, `${id}.svg`), 'utf8');
      expect(wellFormedXmlRoot(svg)).toBe('svg');
      expect(svg).toContain('decision rate per tenth');
    });
  }
});
