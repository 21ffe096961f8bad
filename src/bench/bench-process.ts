/**
 * A child process the benchmark runs (amends worker / relay / view, or the naive consumer):
 * stderr goes to a log file (the worker logs a line per store attempt, which must not cost
 * the harness a pipe), stdout optionally to a line callback. Its peak resident memory is
 * the kernel's VmHWM of the process itself (bin/amends is node, not a shell wrapper).
 */
import { readFileSync } from 'node:fs';
import { WatchedChild } from '../io/process/child-process.js';

const stopGraceMs = 20_000;

export interface BenchProcessOptions {
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  logPath: string;
  onStdoutLine?: (line: string) => void;
}

export class BenchProcess extends WatchedChild {
  private lastPeakRssMb = 0;

  constructor(options: BenchProcessOptions) {
    super({
      name: options.name,
      command: options.command,
      args: options.args,
      env: options.env,
      stderr: { file: options.logPath },
      stdout: options.onStdoutLine ?? 'ignore',
    });
  }

  /** VmHWM in MiB while the process lives; afterwards the last value read. */
  peakRssMb(): number {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const kb = Number(/^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
      if (Number.isFinite(kb)) this.lastPeakRssMb = Math.max(this.lastPeakRssMb, kb / 1024);
    } catch {
      // gone: keep the last reading
    }
    return this.lastPeakRssMb;
  }

  /** SIGKILL: what a crash looks like. Resolves when the process is gone. */
  async crash(): Promise<void> {
    this.peakRssMb();
    await this.kill();
  }

  /** SIGTERM (drain), then SIGKILL after `graceMs`. */
  async stop(graceMs = stopGraceMs): Promise<void> {
    if (!this.running) return;
    this.peakRssMb();
    await this.end('SIGTERM', graceMs);
  }
}
