/**
 * A child process the benchmark runs (amends worker / relay / view, or the naive consumer):
 * stderr goes to a log file (the worker logs a line per store attempt, which must not cost
 * the harness a pipe), stdout optionally to a line callback. Its peak resident memory is
 * the kernel's VmHWM of the process itself (bin/amends is node, not a shell wrapper).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface BenchProcessOptions {
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  logPath: string;
  onStdoutLine?: (line: string) => void;
}

export class BenchProcess {
  readonly name: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private lastPeakRssMb = 0;

  constructor(options: BenchProcessOptions) {
    this.name = options.name;
    const log = openSync(options.logPath, 'a');
    this.child = spawn(options.command, [...options.args], {
      env: options.env,
      stdio: ['ignore', options.onStdoutLine === undefined ? 'ignore' : 'pipe', log],
    });
    closeSync(log);
    const onLine = options.onStdoutLine;
    if (onLine !== undefined && this.child.stdout !== null) {
      createInterface({ input: this.child.stdout }).on('line', onLine);
    }
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
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
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (drain), then SIGKILL after `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    if (!this.running) return;
    this.peakRssMb();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
