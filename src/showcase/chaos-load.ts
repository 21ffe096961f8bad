/**
 * The chaos run's load: the benchmark's ledger traffic (src/domain/ledger-traffic.ts: new
 * posts, corrections, cancels, redeliveries, stale revisions, garbage) over the namespace's
 * stock keys, seeded, written in chunks to fixture files and published with `amendsctl
 * source-load`, as a user loads a source. A chunk that fails (the database away: no producer
 * guard; a broker down past the delivery timeout) is recorded, not retried: its lines may or
 * may not be on the topic, and the verifier judges whatever is.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { addDays } from '../domain/calendar-day.js';
import type { Manifest } from '../domain/config.js';
import { ledgerTraffic, type TrafficRecord } from '../domain/ledger-traffic.js';
import { listedStockKeys } from '../domain/stock-key-terms.js';
import { runAmendsctl } from './showcase-processes.js';

export interface LoadOptions {
  manifest: Manifest;
  manifestPath: string;
  dir: string;
  env: NodeJS.ProcessEnv;
  seed: number;
  recordsPerSecond: number;
  elapsedS: () => number;
}

export interface LoadChunk {
  n: number;
  at_s: number;
  lines: number;
  seconds: number;
  /** source-load's exit code: 0 every line published; otherwise they may or may not be. */
  code: number | null;
  error: string | null;
}

const chunkMs = 2_000;
/** At most this many chunks' worth of records in one chunk after a slow one. */
const chunkCatchUpMax = 5;
/** Each record's own deadline: a leader election on the cluster takes seconds, not this. */
const deliveryTimeoutMs = 60_000;

export class ChaosLoad {
  readonly chunks: LoadChunk[] = [];
  private readonly traffic: Generator<TrafficRecord, never>;

  constructor(private readonly o: LoadOptions) {
    const config = o.manifest.config;
    this.traffic = ledgerTraffic({
      keys: listedStockKeys(config),
      postsPerDay: 20,
      firstDay: addDays(config.ledger_origin, 1),
      seed: o.seed,
      txnPrefix: 'chaos-',
    });
  }

  /**
   * Publishes a chunk about every two seconds until `signal` fires. A chunk is one
   * source-load process, which takes seconds on a loaded machine or through a fault: each
   * chunk carries the records of the whole time since the last one began (up to
   * `chunkCatchUpMax` chunks' worth), so the offered rate stays `recordsPerSecond`.
   */
  async run(signal: AbortSignal): Promise<void> {
    let last = Date.now() - chunkMs;
    while (!signal.aborted) {
      const began = Date.now();
      const spanMs = Math.min(began - last, chunkMs * chunkCatchUpMax);
      last = began;
      await this.publishChunk(Math.max(1, Math.round((this.o.recordsPerSecond * spanMs) / 1000)));
      const left = chunkMs - (Date.now() - began);
      if (left > 0 && !signal.aborted) await sleep(left);
    }
  }

  published(): { lines: number; unknown: number; failedChunks: number } {
    const ok = this.chunks.filter((c) => c.code === 0);
    const failed = this.chunks.filter((c) => c.code !== 0);
    return {
      lines: ok.reduce((sum, c) => sum + c.lines, 0),
      unknown: failed.reduce((sum, c) => sum + c.lines, 0),
      failedChunks: failed.length,
    };
  }

  private async publishChunk(lines: number): Promise<void> {
    const n = this.chunks.length + 1;
    const file = join(this.o.dir, `load-${n}.jsonl`);
    const text = Array.from({ length: lines }, () => fixtureLine(this.traffic.next().value)).join('\n');
    writeFileSync(file, `${text}\n`);
    const at = this.o.elapsedS();
    const began = Date.now();
    const result = await runAmendsctl(
      [
        'source-load',
        '--manifest',
        this.o.manifestPath,
        '--file',
        file,
        '--delivery-timeout-ms',
        String(deliveryTimeoutMs),
      ],
      this.o.env,
    );
    this.chunks.push({
      n,
      at_s: at,
      lines,
      seconds: (Date.now() - began) / 1000,
      code: result.code,
      error: result.code === 0 ? null : result.stderr.trim().split('\n').pop() || `signal ${result.signal}`,
    });
  }
}

/**
 * A traffic record as a fixture line. Its garbage (bytes that are not JSON) cannot be one, so
 * it becomes an object that is no envelope: quarantined as SCHEMA instead of MALFORMED.
 */
function fixtureLine(record: TrafficRecord): string {
  const key = JSON.parse(record.key.toString('utf8')) as unknown;
  let value: unknown;
  try {
    value = JSON.parse(record.value.toString('utf8'));
  } catch {
    value = { schema: 1, garbage: record.value.toString('base64') };
  }
  return JSON.stringify({ key, value });
}
