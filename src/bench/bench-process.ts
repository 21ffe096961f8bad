/**
 * A child process the benchmark runs (amends worker / relay / view, the naive consumer, the
 * Kafka Streams peer's JVM): stderr goes to a log file (the worker logs a line per store
 * attempt, which must not cost the harness a pipe), stdout optionally to a line callback. Its
 * peak resident memory is the kernel's VmHWM of the process itself (bin/amends is node, not a
 * shell wrapper), its CPU time the kernel's utime + stime of it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { WatchedChild } from '../io/process/child-process.js';

const stopGraceMs = 20_000;

/** /proc/<pid>/stat counts CPU time in clock ticks: USER_HZ, which getconf tells (100 on Linux's usual builds). */
const clockTicksPerS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

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
  private lastCpuS = 0;

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

  /** User + system CPU seconds of the process itself (not its children) while it lives; afterwards the last value read. */
  cpuSeconds(): number {
    try {
      // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 14 and 15.
      const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      if (Number.isFinite(ticks)) this.lastCpuS = Math.max(this.lastCpuS, ticks / clockTicksPerS);
    } catch {
      // gone: keep the last reading
    }
    return this.lastCpuS;
  }

  /** SIGKILL: what a crash looks like. Resolves when the process is gone. */
  async crash(): Promise<void> {
    this.peakRssMb();
    this.cpuSeconds();
    await this.kill();
  }

  /** SIGTERM (drain), then SIGKILL after `graceMs`. */
  async stop(graceMs = stopGraceMs): Promise<void> {
    if (!this.running) return;
    this.peakRssMb();
    this.cpuSeconds();
    await this.end('SIGTERM', graceMs);
  }
}
