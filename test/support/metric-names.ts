/**
 * The metric names amends exposes, from the real registries of worker, relay and view
 * (nothing scraped: each metric object is only constructed), plus the names the verify wrapper
 * writes for the node exporter (deploy/amends-verify-textfile) and Prometheus's own `up`; and
 * the metric names a PromQL expression selects. What deploy/'s alert rules and dashboard query
 * is held against the first with the second.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MetricObject } from 'prom-client';
import { newMetricsRegistry } from '../../src/io/process/metrics-server.js';
import type { Queryable } from '../../src/io/store/postgres.js';
import { RelayMetrics } from '../../src/io/transport/relay-metrics.js';
import { ViewMetrics } from '../../src/io/transport/view-metrics.js';
import { WorkerMetrics } from '../../src/io/worker/worker-metrics.js';
import { repoRoot } from './amendsctl-process.js';

/** The series names of one metric as Prometheus stores them. */
function seriesNames(metric: MetricObject): string[] {
  const { name } = metric;
  const type = String(metric.type);
  if (type === 'histogram') return [`${name}_bucket`, `${name}_sum`, `${name}_count`];
  if (type === 'summary') return [name, `${name}_sum`, `${name}_count`];
  return [name];
}

export function amendsMetricNames(): Set<string> {
  const registry = newMetricsRegistry();
  new WorkerMetrics(registry, 'ns');
  const stats = {
    state: 'standby',
    batches: 0,
    published_rows: 0,
    republish_rows: 0,
    last_published_id: null,
  } as const;
  const neverQueried = {} as Queryable; // the outbox gauge queries only when scraped
  new RelayMetrics(registry, 'ns', { ...stats }, neverQueried);
  new ViewMetrics(registry, 'ns');
  const names = new Set(registry.getMetricsAsArray().flatMap(seriesNames));
  const wrapper = readFileSync(join(repoRoot, 'deploy/amends-verify-textfile'), 'utf8');
  for (const m of wrapper.matchAll(/# TYPE (\w+) gauge/g)) names.add(m[1] as string);
  names.add('up');
  return names;
}

/** PromQL's words that are not metric names (functions are told by the `(` after them). */
const promqlWords = new Set([
  'by',
  'without',
  'and',
  'or',
  'unless',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
]);

/** The metric names an expression selects: label matchers, strings, durations and functions removed. */
export function selectedMetricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\w+/g, ' ');
  const names: string[] = [];
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?/g)) {
    const word = m[0].replace(/\s*\($/, '');
    if (m[1] !== undefined || promqlWords.has(word) || /^(e|inf|nan)$/i.test(word)) continue;
    names.push(word);
  }
  return names;
}
