/**
 * The showcase's child processes (docs/design.md#showcase): `amends worker|relay|view`
 * started from this package's own bin/, each with its JSON log lines kept in memory (for the
 * waits that place and observe faults) and written to `<run dir>/<name>.log`.
 *
 * Every child it starts, it stops: `stopAll` continues a stopped child (SIGCONT), asks it to
 * drain (SIGTERM) and SIGKILLs what is still there after the budget. The process-exit hook
 * SIGKILLs anything left when the showcase itself ends some other way.
 */
import { join } from 'node:path';
import {
  type ChildExit,
  type ChildLogLine,
  type ChildOutput,
  describeExit,
  LiveChildren,
  packageBin,
  packageRoot,
  runToEnd,
  WatchedChild,
} from '../io/process/child-process.js';

export { type ChildExit, type ChildLogLine, describeExit };

const stopBudgetMs = 20_000;

/**
 * The showcase's workers run `amends worker` with its fault hooks injected (AMENDS_FAULT_CONTROL,
 * worker-fault-hooks.ts): the same argv, another entry, so `amends worker` knows no fault.
 */
export const faultableWorkerEntry = join(packageRoot, 'dist', 'cli', 'faultable-worker.js');

export class ShowcaseChild extends WatchedChild {
  /** `waitForLine`, by the name the showcase's steps use. */
  waitForLog(...args: Parameters<WatchedChild['waitForLine']>): Promise<ChildLogLine> {
    return this.waitForLine(...args);
  }

  /** A line on the child's stdin (its fault control channel, worker-fault-hooks.ts). */
  control(line: string): void {
    this.write(line);
  }

  async stop(budgetMs = stopBudgetMs): Promise<ChildExit> {
    this.expectedExit = true;
    // A stopped process cannot act on SIGTERM until it is continued.
    this.signal('SIGCONT');
    const { code, signal } = await this.end('SIGTERM', budgetMs);
    return { code, signal };
  }
}

export interface ChildReport {
  name: string;
  pid: number;
  /** `exit 0`, `signal SIGKILL`: how it ended (only a deliberate kill ends by a signal). */
  ended: string;
}

export class ShowcaseProcesses {
  private readonly children: ShowcaseChild[] = [];
  private readonly live = new LiveChildren<ShowcaseChild>();

  constructor(
    private readonly runDir: string,
    private readonly env: NodeJS.ProcessEnv,
    /** Ends every wait at once (Ctrl-C). */
    private readonly abort: AbortSignal,
  ) {}

  /** `amends <args>` (or `entry <args>`) as child `name`; `env` adds to the showcase's environment. */
  start(name: string, args: string[], env: Record<string, string> = {}, entry = packageBin('amends')): ShowcaseChild {
    const started = new ShowcaseChild({
      name,
      command: process.execPath,
      args: [entry, ...args],
      cwd: packageRoot,
      env: { ...this.env, ...env },
      stdin: 'pipe',
      stderr: 'lines',
      copyTo: join(this.runDir, `${name}.log`),
      // Its diagnostics end up in the showcase's own one-line diagnostic.
      tail: { lines: 3, separator: ' | ' },
      abort: this.abort,
    });
    this.children.push(started);
    this.live.add(started);
    return started;
  }

  /** The first child that died without being asked to. */
  unexpectedExit(): ShowcaseChild | undefined {
    return this.children.find((c) => c.exit !== undefined && !c.expectedExit);
  }

  /** Stops every child; returns how each one ended, for the report. */
  async stopAll(): Promise<ChildReport[]> {
    await Promise.all(this.children.map((c) => c.stop()));
    this.live.release();
    return this.children.map((c) => ({
      name: c.name,
      pid: c.pid,
      ended: c.exit === undefined ? 'running' : describeExit(c.exit),
    }));
  }
}

/** One-shot `amendsctl <args>` from this package, its output collected. */
export function runAmendsctl(args: string[], env: NodeJS.ProcessEnv): Promise<ChildOutput> {
  return runToEnd(process.execPath, [packageBin('amendsctl'), ...args], { cwd: packageRoot, env });
}
