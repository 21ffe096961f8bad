/**
 * The chaos run's supervisor: keeps two workers, a relay and a view running, as a
 * restart-always service manager would, each restarted under its own `--instance-id` half a
 * second after it exits. It records every exit with its cause: the nemesis fault that killed
 * it, the run's own stop, or nothing, which makes it unexpected (a process that gave up
 * within the outage budget, or crashed).
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { ChaosProcess } from './nemesis-plan.js';
import type { ChildLogLine, ShowcaseChild, ShowcaseProcesses } from './showcase-processes.js';

const restartDelayMs = 500;

export interface ProcessSpec {
  args: string[];
  env: Record<string, string>;
}

export interface ProcessExit {
  /** Seconds from the start of the run. */
  at_s: number;
  pid: number;
  code: number | null;
  signal: string | null;
  /** `fault N` (the nemesis killed it), `stop` (the run stopped it), or null: unexpected. */
  cause: string | null;
  /** Its last stderr lines (its own last words, for an exit nobody caused). */
  last_lines: string;
}

export interface ProcessRecord {
  starts: number;
  exits: ProcessExit[];
}

export class Supervisor {
  readonly records = new Map<ChaosProcess, ProcessRecord>();
  private readonly running = new Map<ChaosProcess, ShowcaseChild>();
  /** Every start of each process, in order (ShowcaseProcesses keeps them all anyway). */
  private readonly starts = new Map<ChaosProcess, ShowcaseChild[]>();
  /** Why the next exit of a process happens, set just before the run causes it. */
  private readonly causes = new Map<ChaosProcess, string>();
  private readonly started = new Map<ChaosProcess, Array<() => void>>();
  private stopping = false;

  constructor(
    private readonly processes: ShowcaseProcesses,
    private readonly specs: ReadonlyMap<ChaosProcess, ProcessSpec>,
    private readonly elapsedS: () => number,
  ) {}

  startAll(): void {
    for (const name of this.specs.keys()) this.launch(name);
  }

  /** SIGKILL for fault `cause`; resolves once the supervisor has started it again. */
  kill(name: ChaosProcess, cause: string): Promise<void> {
    const restarted = new Promise<void>((resolve) => {
      this.started.set(name, [...(this.started.get(name) ?? []), resolve]);
    });
    this.causes.set(name, cause);
    this.running.get(name)?.signal('SIGKILL');
    return restarted;
  }

  signal(name: ChaosProcess, signal: NodeJS.Signals): void {
    this.running.get(name)?.signal(signal);
  }

  /** Exits nobody caused, per process. */
  unexpectedExits(): { name: ChaosProcess; exit: ProcessExit }[] {
    return [...this.records].flatMap(([name, r]) =>
      r.exits.filter((e) => e.cause === null).map((exit) => ({ name, exit })),
    );
  }

  /** The log lines of each start of `name`, in start order. */
  logsOf(name: ChaosProcess): ChildLogLine[][] {
    return (this.starts.get(name) ?? []).map((child) => child.logs);
  }

  /** SIGTERM to each (a paused one is continued first), restarts off; how each ended. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    // A kill whose restart will not come now does not keep its fault waiting.
    for (const waiting of this.started.values()) for (const resolve of waiting) resolve();
    this.started.clear();
    await Promise.all(
      [...this.running].map(([name, child]) => {
        this.causes.set(name, 'stop');
        return child.stop();
      }),
    );
  }

  private launch(name: ChaosProcess): void {
    const spec = this.specs.get(name);
    if (spec === undefined || this.stopping) return;
    const child = this.processes.start(name, spec.args, spec.env);
    this.running.set(name, child);
    this.starts.set(name, [...(this.starts.get(name) ?? []), child]);
    const record = this.records.get(name) ?? { starts: 0, exits: [] };
    record.starts += 1;
    this.records.set(name, record);
    for (const resolve of this.started.get(name) ?? []) resolve();
    this.started.delete(name);
    void child.exited.then(async (exit) => {
      const cause = this.causes.get(name) ?? null;
      this.causes.delete(name);
      record.exits.push({
        at_s: this.elapsedS(),
        pid: child.pid,
        code: exit.code,
        signal: exit.signal,
        cause,
        last_lines: child.tail(),
      });
      if (this.stopping) return;
      await sleep(restartDelayMs);
      this.launch(name);
    });
  }
}
