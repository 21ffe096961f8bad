/**
 * How long each hop of the live chain spends per batch, from the processes' own JSON logs:
 * the worker's commit interval and store call (process_attempt), the relay's publish cycle
 * (relay_published.elapsed_ms) and the view's apply (view_applied.elapsed_ms). A record waits
 * for about one cycle of each hop, so these bound publish → view latency from below.
 */
import { existsSync, readFileSync } from 'node:fs';
import { profileAttempts } from './attempt-log-profile.js';

export interface HopProfile {
  worker_commit_interval_ms: number;
  worker_store_call_p50_ms: number;
  worker_records_per_commit: number;
  relay_cycle_p50_ms: number;
  view_apply_p50_ms: number;
}

export function profileHops(workerLogs: readonly string[], relayLog: string, viewLog: string): HopProfile {
  const worker = profileAttempts(workerLogs.filter((p) => existsSync(p)));
  return {
    worker_commit_interval_ms: worker.commit_interval_ms,
    worker_store_call_p50_ms: worker.store_call_ms.p50,
    worker_records_per_commit: worker.commits === 0 ? Number.NaN : worker.records / worker.commits,
    relay_cycle_p50_ms: medianElapsed(relayLog, 'relay_published'),
    view_apply_p50_ms: medianElapsed(viewLog, 'view_applied'),
  };
}

function medianElapsed(path: string, msg: string): number {
  if (!existsSync(path)) return Number.NaN;
  const values = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.includes(`"msg":"${msg}"`))
    .map((line) => (JSON.parse(line) as { elapsed_ms: number }).elapsed_ms)
    .sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)] ?? Number.NaN;
}
