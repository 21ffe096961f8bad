/**
 * The run's picture (artifacts/bench/<run-id>.svg): throughput bars (batch 1, the best batch,
 * the Kafka Streams peer, the evidence floor, the Connect-style sink and the naive baseline)
 * beside the publish → view latency distribution with its p50 and p99.
 * A scale run's picture: the decision rate of each tenth of the backlog (the first and the
 * last, which the target compares, marked) beside the workers' peak RSS as each tenth was
 * decided, against the 250 MB target; the restart's figures in the subtitle.
 * A Vega-Lite spec compiled to Vega and rendered headless by Vega's own SVG renderer.
 */
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import type { AnyBenchResult, BenchResult, ScaleBenchResult } from './bench-report.js';

export async function renderChart(r: AnyBenchResult): Promise<string> {
  return render('scale' in r ? scaleSpec(r) : fullSpec(r));
}

/** One side of a chart: each is a declarative Vega-Lite literal over the figures it shows. */
type Panel = Extract<vegaLite.TopLevelSpec, { hconcat: unknown }>['hconcat'][number];

const schema = 'https://vega.github.io/schema/vega-lite/v6.json';
const chartConfig = { font: 'sans-serif', view: { stroke: null } };

function fullSpec(r: BenchResult): vegaLite.TopLevelSpec {
  return {
    $schema: schema,
    title: {
      text: `amends benchmark ${r.run_id}`,
      subtitle: `${r.backlog.records.toLocaleString('en')} records, 2 partitions, 2 processes each`,
    },
    config: chartConfig,
    hconcat: [throughputPanel(r), latencyPanel(r)],
  };
}

function throughputPanel(r: BenchResult): Panel {
  const t = r.throughput;
  const bars = [
    { run: 'batch 1', rps: Math.round(t.batch1_rps), kind: 'amends' },
    { run: `batch ${t.best.batch_size} (best)`, rps: Math.round(t.best.rps), kind: 'amends' },
    { run: 'Kafka Streams EOS v2', rps: Math.round(t.kstreams_rps), kind: 'peer' },
    { run: 'evidence floor', rps: Math.round(t.floor_rps), kind: 'reference' },
    { run: 'Connect-style sink', rps: Math.round(t.connect_rps), kind: 'reference' },
    { run: 'naive baseline', rps: Math.round(t.naive_rps), kind: 'reference' },
  ];
  return {
    title: 'throughput (records/s, 2 processes or stream threads)',
    width: 330,
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
            scale: { domain: ['amends', 'peer', 'reference'], range: ['#4c78a8', '#f58518', '#bab0ac'] },
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
  };
}

function latencyPanel(r: BenchResult): Panel {
  const percentiles = [
    { label: `p50 ${r.latency_ms.p50.toFixed(0)} ms`, ms: r.latency_ms.p50 },
    { label: `p99 ${r.latency_ms.p99.toFixed(0)} ms`, ms: r.latency_ms.p99 },
  ];
  return {
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
  };
}

function scaleSpec(r: ScaleBenchResult): vegaLite.TopLevelSpec {
  const s = r.scale;
  const figure = (v: number | null, digits: number, unit: string) =>
    v === null ? 'n/a' : `${v.toFixed(digits)} ${unit}`;
  return {
    $schema: schema,
    title: {
      text: `amends scale run ${r.run_id} (${s.shape})`,
      subtitle: [
        // Short lines: without a canvas, Vega estimates text widths generously and sizes the SVG by them.
        `${s.records.toLocaleString('en')} records, ${s.transactions.toLocaleString('en')} transactions, ${s.keys.toLocaleString('en')} keys on ${s.partitions} partitions`,
        `${s.workers} workers at batch ${s.batch_size}; peak worker RSS ${figure(s.rss_mb_peak, 0, 'MB')}`,
        `SIGKILL + restart -> next decision ${figure(s.restart_to_decision_s, 2, 's')}`,
        `claim -> first commit ${figure(s.first_commit_after_claim_ms, 1, 'ms')}`,
      ],
    },
    config: chartConfig,
    hconcat: [tenthRatesPanel(r), tenthRssPanel(r)],
  };
}

/** The decision rate of each tenth of the backlog; the first and the last (compared) marked. */
function tenthRatesPanel(r: ScaleBenchResult): Panel {
  const s = r.scale;
  const last = s.rps_by_tenth.length;
  const rates = s.rps_by_tenth.map((rps, i) => ({
    tenth: i + 1,
    rps: rps === null ? null : Math.round(rps),
    kind: i === 0 || i === last - 1 ? 'compared' : 'other',
  }));
  return {
    title: `decision rate per tenth (last / first ${s.ratio_last_to_first === null ? 'n/a' : s.ratio_last_to_first.toFixed(2)}x)`,
    width: 320,
    height: 220,
    data: { values: rates },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          x: { field: 'tenth', type: 'ordinal', title: 'tenth of the backlog', axis: { labelAngle: 0 } },
          y: { field: 'rps', type: 'quantitative', title: 'records/s' },
          color: {
            field: 'kind',
            type: 'nominal',
            scale: { domain: ['compared', 'other'], range: ['#4c78a8', '#9ecae9'] },
            legend: null,
          },
        },
      },
      {
        mark: { type: 'text', dy: -6, fontSize: 9 },
        encoding: {
          x: { field: 'tenth', type: 'ordinal' },
          y: { field: 'rps', type: 'quantitative' },
          text: { field: 'rps', type: 'quantitative', format: ',' },
        },
      },
    ],
  };
}

/** The workers' peak RSS as each tenth was decided, against the 250 MB target. */
function tenthRssPanel(r: ScaleBenchResult): Panel {
  const rss = r.scale.rss_mb_by_tenth.map((mb, i) => ({ tenth: i + 1, mb }));
  return {
    title: 'peak worker RSS (VmHWM) as each tenth was decided',
    width: 320,
    height: 220,
    layer: [
      {
        data: { values: rss },
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'tenth', type: 'ordinal', title: 'tenth of the backlog decided', axis: { labelAngle: 0 } },
          y: { field: 'mb', type: 'quantitative', title: 'MB', scale: { zero: true } },
        },
      },
      {
        data: { values: [{ mb: 250, label: 'target 250 MB' }] },
        layer: [
          {
            mark: { type: 'rule', color: '#e45756', strokeDash: [4, 3] },
            encoding: { y: { field: 'mb', type: 'quantitative' } },
          },
          {
            mark: { type: 'text', align: 'left', x: 4, dy: 10, color: '#e45756' },
            encoding: { y: { field: 'mb', type: 'quantitative' }, text: { field: 'label', type: 'nominal' } },
          },
        ],
      },
    ],
  };
}

async function render(spec: vegaLite.TopLevelSpec): Promise<string> {
  const compiled = vegaLite.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
