/**
 * What the worker's fault suites (worker-source-validation, worker-commit-faults) add to
 * worker-process.ts: records with exact bytes at their real broker offsets, `simulate`'s raw
 * record lines for them (so export can be compared with simulate over precisely the records
 * the broker made visible, gaps and odd bytes included), and small waits and log filters.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { testName } from './endpoints.js';
import { diagnosticLines, expectFailureLine } from './process-log.js';
import {
  expectExportEqualsSimulate,
  scratchFile,
  type TestSource,
  type WorkerLogLine,
  type WorkerProcess,
} from './worker-process.js';

const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** The key bytes of a stock key, as source-load writes them (canonical JSON). */
export function stockKey(item = 'widget', location = 'berlin'): Buffer {
  return utf8(JSON.stringify({ item, location }));
}

/** A post envelope, canonical member order. */
export function post(txn: string, rev: number, day: string, qty: number, item = 'widget', location = 'berlin'): Buffer {
  return utf8(JSON.stringify({ day, item, location, op: 'post', qty, rev, schema: 1, txn }));
}

/** A record as the broker holds it: exact bytes at a real offset. */
export interface PlacedRecord {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
}

/** Pairs records with the offsets their delivery reports gave. */
export function placed(
  records: readonly { partition: number; key: Buffer | null; value: Buffer | null }[],
  offsets: readonly number[],
): PlacedRecord[] {
  expect(offsets).toHaveLength(records.length);
  return records.map((r, i) => ({ ...r, offset: offsets[i] as number }));
}

/** `simulate`'s raw record line for a record at its real offset (cli.md). */
export function rawRecordLine(r: PlacedRecord): string {
  return JSON.stringify({
    partition: r.partition,
    offset: r.offset,
    key_b64: r.key === null ? null : r.key.toString('base64'),
    value_b64: r.value === null ? null : r.value.toString('base64'),
  });
}

/** A raw-record input file for `simulate` holding exactly these records, per partition in offset order. */
export function rawRecordsFile(records: readonly PlacedRecord[]): string {
  const sorted = [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  return scratchFile(`${testName('raw-records')}.jsonl`, sorted.map((r) => `${rawRecordLine(r)}\n`).join(''));
}

/** export (decisions, outputs) equals simulate over exactly these records, byte for byte. */
export function expectExportEqualsSimulateOf(source: TestSource, records: readonly PlacedRecord[]): Promise<void> {
  return expectExportEqualsSimulate(source, rawRecordsFile(records));
}

/** The diagnostics a user reads: the fatal log lines as `amends worker: …`, and any line that is not JSON. */
export function diagnostics(worker: WorkerProcess): string[] {
  return diagnosticLines(worker);
}

/** The `process_attempt` log lines (worker.md §7). */
export function attempts(worker: WorkerProcess): WorkerLogLine[] {
  return worker.messages('process_attempt');
}

/**
 * The failure contract of worker.md §7: exit 1 and exactly one diagnostic, the log's last
 * line (level fatal; no stack trace), which names what happened. Returns it as a person
 * reads it: `amends worker: …`.
 */
export async function expectFailedExit(worker: WorkerProcess, budgetMs = 30_000): Promise<string> {
  const exit = await worker.waitForExit(budgetMs);
  expect({ code: exit.code, signal: exit.signal }, worker.tail()).toEqual({ code: 1, signal: null });
  const line = expectFailureLine(worker, 'worker');
  expect(worker.stderr).not.toMatch(/^\s+at /m);
  return line;
}

/** Polls `check` every 50 ms until `done` accepts its value; fails past the budget naming the last value. */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T>,
  done: (value: T) => boolean,
  budgetMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const value = await check();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${budgetMs} ms (last: ${JSON.stringify(value)})`);
    await sleep(50);
  }
}
