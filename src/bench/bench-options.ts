/**
 * The benchmark's knobs (`npm run bench -- --records 200000 …`): the full run's defaults are
 * quality.md's sizes; the smoke test passes tiny ones.
 */
import { parseArgs } from 'node:util';

export interface BenchOptions {
  records: number;
  batchSizes: number[];
  batch1WindowS: number;
  latencyRps: number;
  latencyS: number;
  warmupS: number;
  steadyS: number;
  fsyncSecondsPerTest: number;
  outDir: string;
  runId: string;
}

export function parseBenchOptions(argv: readonly string[], defaultOutDir: string): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      records: { type: 'string', default: '200000' },
      'batch-sizes': { type: 'string', default: '100,500,2000,5000' },
      'batch1-window-s': { type: 'string', default: '30' },
      'latency-rps': { type: 'string', default: '1000' },
      'latency-s': { type: 'string', default: '20' },
      'warmup-s': { type: 'string', default: '3' },
      'steady-s': { type: 'string', default: '4' },
      'fsync-s': { type: 'string', default: '1' },
      out: { type: 'string', default: defaultOutDir },
      'run-id': { type: 'string' },
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
    latencyS: positive('latency-s', values['latency-s']),
    warmupS: positive('warmup-s', values['warmup-s']),
    steadyS: positive('steady-s', values['steady-s']),
    fsyncSecondsPerTest: positive('fsync-s', values['fsync-s']),
    outDir: values.out ?? defaultOutDir,
    runId:
      values['run-id'] ??
      `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').toLowerCase()}-${Math.random().toString(36).slice(2, 6)}`,
  };
}
