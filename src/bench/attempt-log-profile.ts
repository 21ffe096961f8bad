/**
 * Where a worker's time per commit goes, from its own `process_attempt` lines (docs/design.md#logs-and-exit):
 * the store call (decide + the one-statement commit, COMMIT included) against the interval
 * between commits; the rest of the interval is the poll, the post-poll source observation
 * and the actors' own work.
 */
import { readFileSync } from 'node:fs';

export interface AttemptProfile {
  commits: number;
  records: number;
  store_call_ms: { mean: number; p50: number; p99: number };
  /** Mean time from one acknowledged commit's log line to the next (ms). */
  commit_interval_ms: number;
}

export function profileAttempts(logPaths: readonly string[]): AttemptProfile {
  const calls: number[] = [];
  const intervals: number[] = [];
  let records = 0;
  for (const path of logPaths) {
    let previous: number | null = null;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (!line.includes('"process_attempt"')) continue;
      const entry = JSON.parse(line) as {
        observation: string;
        records: number;
        storage_call_elapsed_ns: number;
        time: string;
      };
      if (entry.observation !== 'acknowledged') continue;
      const at = Date.parse(entry.time);
      if (previous !== null) intervals.push(at - previous);
      previous = at;
      calls.push(entry.storage_call_elapsed_ns / 1e6);
      records += entry.records;
    }
  }
  const sorted = [...calls].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return {
    commits: calls.length,
    records,
    store_call_ms: { mean: mean(calls), p50: at(0.5), p99: at(0.99) },
    commit_interval_ms: mean(intervals),
  };
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}
