/**
 * The read API's figures for the scale run (issue 36, Done when; docs/benchmarks.md): on the
 * scale namespace, once its workers have stopped,
 * - explain: the store reads `amendsctl explain` makes (explain-read.ts), in this process, for
 *   the last day of the key with the most days, as of now and as of the middle of its partition: the
 *   median and slowest of `explainRuns` warm runs (a process start is not the answer's time);
 * - balances for one key's year: the read API's pages of the key's first 365 days, in this
 *   process (balance-pages.ts), rows per second;
 * - balances of the whole namespace, as a user runs it (`amendsctl balances --format jsonl`, its
 *   output counted, not kept), rows per second and the process's peak RSS (VmHWM), beside the
 *   same command for one key's first 30 days: flat memory means the two peaks are alike.
 */
import os from 'node:os';
import { join } from 'node:path';
import { addDays } from '../domain/calendar-day.js';
import type { Manifest } from '../domain/config.js';
import { stockKeyTerms } from '../domain/stock-key-terms.js';
import { packageBin } from '../io/process/child-process.js';
import type { AsOfRequest } from '../io/store/as-of-bound.js';
import { readBalances } from '../io/store/balance-pages.js';
import { readExplanation } from '../io/store/explain-read.js';
import { withPooledClient } from '../io/store/pooled-client.js';
import { readFrontiers } from '../io/store/read-api.js';
import { apiSchemaFor } from '../io/store/read-api-schema.js';
import type { BenchContext } from './bench-context.js';
import { BenchProcess } from './bench-process.js';
import type { TargetVerdict } from './bench-report.js';

const explainRuns = 10;
const rssSampleMs = 50;

export interface ReadApiFigures {
  key: string;
  explain: {
    day: string;
    contributions: number;
    now_ms: { median: number; max: number };
    /** The bound, and the key's last day then. */
    as_of: string;
    as_of_day: string;
    as_of_ms: { median: number; max: number };
  };
  balances_key_year: { rows: number; ms: number; rows_per_s: number };
  balances_namespace: { rows: number; wall_s: number; rows_per_s: number; peak_rss_mb: number };
  /** The same command for one key's first 30 days: the peak RSS that the whole namespace's should match. */
  balances_short_peak_rss_mb: number;
  load_average_1m: number;
}

export async function measureReadApi(
  ctx: BenchContext,
  manifestPath: string,
  manifest: Manifest,
): Promise<ReadApiFigures> {
  const api = apiSchemaFor(ctx.databaseUrl);
  const namespace = manifest.config.namespace;
  return withPooledClient(ctx.pool, async (client): Promise<ReadApiFigures> => {
    // The key with the most days: the longest explanation and year there are.
    const days = await client.query<{ item: string; location: string; first: string; last: string }>(
      `SELECT item, location, min(day) AS first, max(day) AS last FROM ${api}.latest_versions
        WHERE namespace = $1 GROUP BY item, location ORDER BY count(*) DESC LIMIT 1`,
      [namespace],
    );
    const row = days.rows[0];
    const key = row && stockKeyTerms(manifest.config, row.item, row.location);
    if (row === undefined || key === undefined) throw new Error(`read api: namespace ${namespace} has no balance`);
    const { first, last } = row;
    const frontiers = await readFrontiers(client, api, namespace);
    const middle = Math.floor((frontiers[key.partition] ?? 0) / 2);
    const timed = async (day: string, request: AsOfRequest) => {
      const explainKey = { namespace, item: key.item, location: key.location, day };
      const ms: number[] = [];
      let contributions = 0;
      for (let i = 0; i < explainRuns; i++) {
        const started = performance.now();
        const read = await readExplanation(client, api, explainKey, key.opening, request);
        ms.push(performance.now() - started);
        contributions = read.contributions?.length ?? 0;
      }
      ms.sort((a, b) => a - b);
      return { contributions, ms: { median: round1(ms[Math.floor(ms.length / 2)] ?? 0), max: round1(ms.at(-1) ?? 0) } };
    };
    const now = await timed(last, { kind: 'now' });
    // As of the middle: the key's last day then.
    const asOf = `${key.partition}:${middle}`;
    const through = frontiers.map((f, p) => (p === key.partition ? middle : f - 1));
    const then = await client.query<{ day: string | null }>(
      `SELECT max(day) AS day FROM ${api}.balances_as_of($1, $2::bigint[], $3, $4)`,
      [namespace, through.map(String), key.item, key.location],
    );
    const atMiddle = await timed(then.rows[0]?.day ?? last, { kind: 'position', text: asOf });

    const filter = { item: key.item, location: key.location, from: first, to: addDays(first, 364) };
    const started = performance.now();
    let rows = 0;
    const nowThrough = frontiers.map((f) => f - 1);
    for await (const _ of readBalances(client, api, namespace, filter, nowThrough)) rows++;
    const ms = performance.now() - started;

    const whole = await balancesProcess(ctx, manifestPath, 'balances-namespace', []);
    const short = await balancesProcess(ctx, manifestPath, 'balances-short', [
      ...['--item', key.item, '--location', key.location, '--from', first, '--to', addDays(first, 29)],
    ]);
    return {
      key: `${key.item}@${key.location}`,
      explain: {
        day: last,
        contributions: now.contributions,
        now_ms: now.ms,
        as_of: asOf,
        as_of_day: then.rows[0]?.day ?? last,
        as_of_ms: atMiddle.ms,
      },
      balances_key_year: { rows, ms: round1(ms), rows_per_s: Math.round(rows / (ms / 1000)) },
      balances_namespace: whole,
      balances_short_peak_rss_mb: short.peak_rss_mb,
      load_average_1m: Math.round((os.loadavg()[0] ?? Number.NaN) * 100) / 100,
    };
  });
}

/** `amendsctl balances --format jsonl` as a user runs it: its lines counted, its VmHWM sampled until it exits. */
async function balancesProcess(ctx: BenchContext, manifestPath: string, name: string, extra: string[]) {
  let rows = 0;
  const started = performance.now();
  const child = new BenchProcess({
    name,
    command: packageBin('amendsctl'),
    args: ['balances', '--manifest', manifestPath, '--format', 'jsonl', ...extra],
    env: ctx.env,
    logPath: join(ctx.logsDir, `${name}.log`),
    onStdoutLine: () => {
      rows++;
    },
  });
  const sampler = setInterval(() => child.peakRssMb(), rssSampleMs);
  const exit = await child.exited;
  clearInterval(sampler);
  if (exit.code !== 0) throw new Error(`${name} exited ${exit.code} (see ${ctx.logsDir}/${name}.log)`);
  const wallS = (performance.now() - started) / 1000;
  return { rows, wall_s: round1(wallS), rows_per_s: Math.round(rows / wallS), peak_rss_mb: round1(child.peakRssMb()) };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

/** issue 36: one explain <= 50 ms; one key's year of balances >= 50,000 rows/s; the whole namespace's in flat memory. */
export function readApiTargets(r: ReadApiFigures, atScale: boolean, size: string): TargetVerdict[] {
  const rssRatio =
    r.balances_short_peak_rss_mb > 0 ? r.balances_namespace.peak_rss_mb / r.balances_short_peak_rss_mb : null;
  const load = `load ${r.load_average_1m}`;
  return [
    {
      target: 'scale: explain of one day <= 50 ms (2,000,000 records)',
      measured: `${r.explain.now_ms.median} ms median, ${r.explain.now_ms.max} ms slowest (${r.explain.contributions} transactions; as of ${r.explain.as_of}: ${r.explain.as_of_ms.median} ms) at ${size}, ${load}`,
      met: atScale && r.explain.now_ms.median <= 50,
    },
    {
      target: "scale: balances of one key's year >= 50,000 rows/s",
      measured: `${r.balances_key_year.rows} rows in ${r.balances_key_year.ms} ms (${r.balances_key_year.rows_per_s} rows/s) at ${size}, ${load}`,
      met: atScale && r.balances_key_year.rows_per_s >= 50_000,
    },
    {
      target: "scale: balances of the namespace in flat memory (peak RSS <= 1.1x a 30-day key's)",
      measured: `${r.balances_namespace.rows} rows, ${r.balances_namespace.rows_per_s} rows/s, ${r.balances_namespace.peak_rss_mb} MB vs ${r.balances_short_peak_rss_mb} MB, ${load}`,
      met: atScale && rssRatio !== null && rssRatio <= 1.1,
    },
  ];
}
