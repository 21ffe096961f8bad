/**
 * Reads an `amends worker`'s JSON log (its stderr, one line per write, json-log.ts) from a
 * byte offset on, in chunks, whole lines only: a long log never sits in memory, and a log
 * that is still being written can be read again later from where the last read stopped.
 * Only the lines the scale run times are kept: `worker_started`, `store_observed` (a
 * seek's or a recovery's observation) and `process_attempt` (docs/design.md#logs-and-exit).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

export interface AttemptEntry {
  msg: 'process_attempt';
  partition: number;
  epoch: number;
  records: number;
  observation: string;
  storage_call_elapsed_ns: number;
  /** The line's `time`: written right after the store call returned. */
  atMs: number;
}

export interface ObservedEntry {
  msg: 'store_observed';
  partition: number;
  epoch: number;
  frontier: number;
  atMs: number;
}

export interface StartedEntry {
  msg: 'worker_started';
  atMs: number;
}

export type WorkerLogEntry = AttemptEntry | ObservedEntry | StartedEntry;

const chunkBytes = 1 << 20;
const kept = ['process_attempt', 'store_observed', 'worker_started'];

export class WorkerLogTail {
  private partial = '';
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    readonly path: string,
    private offset = 0,
  ) {}

  /** Hands every kept entry written since the last call to `onEntry`, in file order. */
  read(onEntry: (entry: WorkerLogEntry) => void): void {
    const fd = openSync(this.path, 'r');
    try {
      const size = fstatSync(fd).size;
      const buffer = Buffer.alloc(chunkBytes);
      while (this.offset < size) {
        const n = readSync(fd, buffer, 0, Math.min(chunkBytes, size - this.offset), this.offset);
        if (n === 0) break;
        this.offset += n;
        const lines = (this.partial + this.decoder.write(buffer.subarray(0, n))).split('\n');
        this.partial = lines.pop() ?? '';
        for (const line of lines) {
          const entry = entryOf(line);
          if (entry !== null) onEntry(entry);
        }
      }
    } finally {
      closeSync(fd);
    }
  }
}

function entryOf(line: string): WorkerLogEntry | null {
  if (!kept.some((msg) => line.includes(`"msg":"${msg}"`))) return null;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null; // not a whole JSON line (a process killed mid-write): nothing to time
  }
  const atMs = Date.parse(String(raw.time));
  if (!Number.isFinite(atMs)) return null;
  if (raw.msg === 'worker_started') return { msg: 'worker_started', atMs };
  if (raw.msg === 'store_observed') {
    return {
      msg: 'store_observed',
      partition: Number(raw.partition),
      epoch: Number(raw.epoch),
      frontier: Number(raw.frontier),
      atMs,
    };
  }
  if (raw.msg !== 'process_attempt') return null;
  return {
    msg: 'process_attempt',
    partition: Number(raw.partition),
    epoch: Number(raw.epoch),
    records: Number(raw.records),
    observation: String(raw.observation),
    storage_call_elapsed_ns: Number(raw.storage_call_elapsed_ns),
    atMs,
  };
}
