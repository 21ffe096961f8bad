/**
 * The run's picture (artifacts/bench/<run-id>.svg): throughput bars (batch 1, the best batch,
 * the naive baseline) beside the publish → view latency distribution with its p50 and p99.
 * A Vega-Lite spec compiled to Vega and rendered headless by Vega's own SVG renderer.
 */
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import type { BenchResult } from './bench-report.js';

export async function renderChart(r: BenchResult): Promise<string> {
  const t = r.throughput;
  const bars = [
    { run: 'batch 1', rps: Math.round(t.batch1_rps), kind: 'amends' },
    { run: `batch ${t.best.batch_size} (best)`, rps: Math.round(t.best.rps), kind: 'amends' },
    { run: 'naive baseline', rps: Math.round(t.naive_rps), kind: 'naive' },
  ];
  const percentiles = [
    { label: `p50 ${r.latency_ms.p50.toFixed(0)} ms`, ms: r.latency_ms.p50 },
    { label: `p99 ${r.latency_ms.p99.toFixed(0)} ms`, ms: r.latency_ms.p99 },
  ];
  const spec: vegaLite.TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `amends benchmark ${r.run_id}`,
      subtitle: `${r.backlog.records.toLocaleString('en')} records, 2 partitions, 2 processes each`,
    },
    config: { font: 'sans-serif', view: { stroke: null } },
    hconcat: [
      {
        title: 'throughput (records/s, 2 processes)',
        width: 260,
        height: 220,
        data: { values: bars },
        layer: [
          {
            mark: { type: 'bar' },
            encoding: {
              x: { field: 'run', type: 'nominal', sort: null, title: null, axis: { labelAngle: 0 } },
              y: { field: 'rps', type: 'quantitative', title: 'records/s' },
              color: {
                field: 'kind',
                type: 'nominal',
                scale: { domain: ['amends', 'naive'], range: ['#4c78a8', '#bab0ac'] },
                legend: null,
              },
            },
          },
          {
            mark: { type: 'text', dy: -6 },
            encoding: {
              x: { field: 'run', type: 'nominal', sort: null },
              y: { field: 'rps', type: 'quantitative' },
              text: { field: 'rps', type: 'quantitative', format: ',' },
            },
          },
        ],
      },
      {
        title: `publish -> view latency at ${Math.round(r.latency_ms.offered_rps)} records/s (n=${r.latency_ms.samples})`,
        width: 360,
        height: 220,
        layer: [
          {
            data: { values: r.latency_distribution_ms.map((ms) => ({ ms })) },
            mark: { type: 'bar' },
            encoding: {
              x: { field: 'ms', type: 'quantitative', bin: { maxbins: 60 }, title: 'milliseconds' },
              y: { aggregate: 'count', type: 'quantitative', title: 'samples' },
            },
          },
          {
            data: { values: percentiles },
            layer: [
              {
                mark: { type: 'rule', color: '#e45756', strokeDash: [4, 3] },
                encoding: { x: { field: 'ms', type: 'quantitative' } },
              },
              {
                mark: { type: 'text', align: 'left', dx: 4, dy: -90, color: '#e45756' },
                encoding: { x: { field: 'ms', type: 'quantitative' }, text: { field: 'label', type: 'nominal' } },
              },
            ],
          },
        ],
      },
    ],
  };
  const compiled = vegaLite.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
