/**
 * The benchmark's knobs (`npm run bench -- --records 200000 …`): the full run's defaults are
 * docs/design.md#quality's sizes; the smoke test passes tiny ones. `--scale` selects the scale run
 * instead (issue 13): its sizes come from `--scale-shape` and the `--scale-*` knobs.
 */
import { parseArgs } from 'node:util';

export type ScaleShapeName = 'narrow' | 'wide';

/** The scale run's two shapes (docs/design.md#scale-run): 2 keys on 2 partitions, or 2,000 keys on 8. */
export const scaleShapes: Record<ScaleShapeName, { keys: number; partitions: number; workers: number }> = {
  narrow: { keys: 2, partitions: 2, workers: 2 },
  wide: { keys: 2_000, partitions: 8, workers: 4 },
};

export interface ScaleOptions {
  shape: ScaleShapeName;
  records: number;
  keys: number;
  partitions: number;
  workers: number;
  /** The best batch size of the latest quiet full run (docs/benchmarks.md): 500. */
  batchSize: number;
}

export interface BenchOptions {
  records: number;
  batchSizes: number[];
  batch1WindowS: number;
  latencyRps: number;
  /** The second, higher offered load of the latency phase (issue 34); 0: not measured. */
  latencyHighRps: number;
  latencyS: number;
  warmupS: number;
  steadyS: number;
  fsyncSecondsPerTest: number;
  outDir: string;
  runId: string;
  /** Set by `--scale`: run the scale phase only (machine, versions, then the scale run). */
  scale: ScaleOptions | null;
}

const scaleRecordsMin = 1_000;
const scaleBatchSizeMax = 10_000;

/** Each flag's default, as parseArgs takes it: the parser and `--help` read the same table. */
const flagDefaults = {
  records: '200000',
  'batch-sizes': '100,500,2000,5000',
  'batch1-window-s': '30',
  'latency-rps': '1000',
  'latency-high-rps': '10000',
  'latency-s': '20',
  'warmup-s': '3',
  'steady-s': '4',
  'fsync-s': '1',
  'scale-shape': 'narrow',
  'scale-records': '2000000',
  'scale-batch-size': '500',
} as const;

const shapeText = (name: ScaleShapeName) => {
  const { keys, partitions, workers } = scaleShapes[name];
  return `${name} (${keys.toLocaleString('en-US')} keys, ${partitions} partitions, ${workers} workers)`;
};

/** `--help`: what a run does and every flag, with its default. */
export const benchUsage = `Usage
  npm run bench [-- FLAGS]                 (node dist/bench/main.js FLAGS)

  On the local stack (npm run up): pg_test_fsync, a backlog, two workers at batch 1 and at each
  batch size, verify, the Kafka Streams peer (exactly_once_v2, 2 stream threads; built once with
  Maven by scripts/kstreams-peer.sh), the evidence floor, Connect-style and naive baselines, the
  live chain's publish -> view latency, SIGKILL + restart and takeover. Writes
  artifacts/bench/<run-id>.json and .svg and prints the table with each target met or MISSED
  (docs/benchmarks.md says what each measures). AMENDS_DATABASE_URL and AMENDS_BROKERS pick
  another database or broker; AMENDS_KSTREAMS_JVM_OPTS adds options to the peer's JVM.

Flags
  --records N               backlog records (default ${flagDefaults.records})
  --batch-sizes LIST        worker batch sizes beside 1 (default ${flagDefaults['batch-sizes']})
  --batch1-window-s S       seconds of batch-1 commits measured (default ${flagDefaults['batch1-window-s']})
  --latency-rps N           offered load of the latency phase (default ${flagDefaults['latency-rps']})
  --latency-high-rps N      its second, higher load (default ${flagDefaults['latency-high-rps']}; 0: none)
  --latency-s S             its measured seconds (default ${flagDefaults['latency-s']}), after --warmup-s (default ${flagDefaults['warmup-s']})
  --steady-s S              steady load before each SIGKILL (default ${flagDefaults['steady-s']})
  --fsync-s S               pg_test_fsync seconds per test (default ${flagDefaults['fsync-s']})
  --out DIR                 where results go (default artifacts/bench)
  --run-id ID               names the run's files, topics and namespaces (default: time + random)
  --scale                   the scale run alone instead (issue 13)
  --scale-shape SHAPE       ${shapeText('narrow')} or
                            ${shapeText('wide')}; default ${flagDefaults['scale-shape']}
  --scale-records N         (default ${flagDefaults['scale-records']}); --scale-keys, --scale-partitions,
                            --scale-workers override the shape; --scale-batch-size (default ${flagDefaults['scale-batch-size']})
  -h, --help                this help
`;

export function parseBenchOptions(argv: readonly string[], defaultOutDir: string): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      records: { type: 'string', default: flagDefaults.records },
      'batch-sizes': { type: 'string', default: flagDefaults['batch-sizes'] },
      'batch1-window-s': { type: 'string', default: flagDefaults['batch1-window-s'] },
      'latency-rps': { type: 'string', default: flagDefaults['latency-rps'] },
      'latency-high-rps': { type: 'string', default: flagDefaults['latency-high-rps'] },
      'latency-s': { type: 'string', default: flagDefaults['latency-s'] },
      'warmup-s': { type: 'string', default: flagDefaults['warmup-s'] },
      'steady-s': { type: 'string', default: flagDefaults['steady-s'] },
      'fsync-s': { type: 'string', default: flagDefaults['fsync-s'] },
      out: { type: 'string', default: defaultOutDir },
      'run-id': { type: 'string' },
      scale: { type: 'boolean', default: false },
      'scale-shape': { type: 'string', default: flagDefaults['scale-shape'] },
      'scale-records': { type: 'string', default: flagDefaults['scale-records'] },
      'scale-keys': { type: 'string' },
      'scale-partitions': { type: 'string' },
      'scale-workers': { type: 'string' },
      'scale-batch-size': { type: 'string', default: flagDefaults['scale-batch-size'] },
    },
    strict: true,
  });
  const positive = (name: string, text: string | undefined): number => {
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${text}`);
    return n;
  };
  const batchSizes = (values['batch-sizes'] ?? '').split(',').map((s) => positive('batch-sizes', s.trim()));
  const records = positive('records', values.records);
  if (records < 100) throw new Error('--records must be at least 100');
  return {
    records,
    batchSizes: batchSizes.filter((b) => b !== 1),
    batch1WindowS: positive('batch1-window-s', values['batch1-window-s']),
    latencyRps: positive('latency-rps', values['latency-rps']),
    latencyHighRps: values['latency-high-rps'] === '0' ? 0 : positive('latency-high-rps', values['latency-high-rps']),
    latencyS: positive('latency-s', values['latency-s']),
    warmupS: positive('warmup-s', values['warmup-s']),
    steadyS: positive('steady-s', values['steady-s']),
    fsyncSecondsPerTest: positive('fsync-s', values['fsync-s']),
    outDir: values.out ?? defaultOutDir,
    runId:
      values['run-id'] ??
      `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').toLowerCase()}-${Math.random().toString(36).slice(2, 6)}`,
    scale: values.scale === true ? parseScaleOptions(values, positive) : null,
  };
}

function parseScaleOptions(
  values: Record<string, string | boolean | undefined>,
  positive: (name: string, text: string | undefined) => number,
): ScaleOptions {
  const shape = values['scale-shape'];
  if (shape !== 'narrow' && shape !== 'wide') throw new Error(`--scale-shape must be narrow or wide, got ${shape}`);
  const defaults = scaleShapes[shape];
  const text = (name: string, fallback: number) => {
    const v = values[name];
    return typeof v === 'string' ? v : String(fallback);
  };
  const options: ScaleOptions = {
    shape,
    records: positive('scale-records', text('scale-records', 2_000_000)),
    keys: positive('scale-keys', text('scale-keys', defaults.keys)),
    partitions: positive('scale-partitions', text('scale-partitions', defaults.partitions)),
    workers: positive('scale-workers', text('scale-workers', defaults.workers)),
    batchSize: positive('scale-batch-size', text('scale-batch-size', 500)),
  };
  if (options.records < scaleRecordsMin) throw new Error(`--scale-records must be at least ${scaleRecordsMin}`);
  // Keys go to partitions round-robin: every partition needs one, or it never has a decision.
  if (options.keys < options.partitions) throw new Error('--scale-keys must be at least --scale-partitions');
  if (options.workers > options.partitions) throw new Error('--scale-workers must be at most --scale-partitions');
  if (options.batchSize > scaleBatchSizeMax) throw new Error(`--scale-batch-size must be at most ${scaleBatchSizeMax}`);
  return options;
}
