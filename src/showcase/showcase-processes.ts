/**
 * The showcase's child processes (verification.md, Showcase): `amends worker|relay|view`
 * started from this package's own bin/, each with its JSON log lines kept in memory (for the
 * waits that place and observe faults) and written to `<run dir>/<name>.log`.
 *
 * Every child it starts, it stops: `stopAll` continues a stopped child (SIGCONT), asks it to
 * drain (SIGTERM) and SIGKILLs what is still there after the budget. The process-exit hook
 * SIGKILLs anything left when the showcase itself ends some other way.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { operationalError } from '../kernel/amends-error.js';

export const packageRoot = fileURLToPath(new URL('../..', import.meta.url));
const stopBudgetMs = 20_000;
const pollMs = 50;

export type ChildLogLine = Record<string, unknown> & { msg?: string; time?: string };

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ShowcaseChild {
  readonly logs: ChildLogLine[] = [];
  readonly exited: Promise<ChildExit>;
  exit: ChildExit | undefined;
  /** Set when the showcase stops or kills it on purpose, so its exit is not a failure. */
  expectedExit = false;
  private partial = '';
  private lastLines: string[] = [];

  constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    private readonly logFile: WriteStream,
    /** Ends every wait at once (Ctrl-C). */
    private readonly abort: AbortSignal,
  ) {
    child.stderr?.on('data', (chunk: Buffer) => this.take(chunk));
    child.stdout?.on('data', (chunk: Buffer) => logFile.write(chunk));
    this.exited = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        logFile.end();
        resolve(this.exit);
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** A line on the child's stdin (its fault control channel, worker-fault-hooks.ts). */
  control(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  signal(signal: NodeJS.Signals): void {
    if (this.exit === undefined) this.child.kill(signal);
  }

  /** The first log line (from `from` on) that matches; fails when the child exits first or the budget ends. */
  async waitForLog(
    what: string,
    matches: (line: ChildLogLine) => boolean,
    budgetMs: number,
    from = 0,
  ): Promise<ChildLogLine> {
    const deadline = Date.now() + budgetMs;
    for (let i = from; ; ) {
      this.abort.throwIfAborted();
      for (; i < this.logs.length; i++) {
        const line = this.logs[i] as ChildLogLine;
        if (matches(line)) return line;
      }
      if (this.exit !== undefined) {
        throw operationalError(`${this.name} exited (${describeExit(this.exit)}) before ${what}: ${this.tail()}`);
      }
      if (Date.now() > deadline)
        throw operationalError(`${this.name}: no ${what} within ${budgetMs / 1000} s: ${this.tail()}`);
      await sleep(pollMs);
    }
  }

  async stop(budgetMs = stopBudgetMs): Promise<ChildExit> {
    this.expectedExit = true;
    if (this.exit !== undefined) return this.exit;
    // A stopped process cannot act on SIGTERM until it is continued.
    this.child.kill('SIGCONT');
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), budgetMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  async kill(): Promise<ChildExit> {
    this.expectedExit = true;
    this.signal('SIGKILL');
    return this.exited;
  }

  /** The last few lines it wrote, for a diagnostic. */
  tail(): string {
    return this.lastLines.slice(-3).join(' | ');
  }

  private take(chunk: Buffer): void {
    this.logFile.write(chunk);
    const parts = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = parts.pop() ?? '';
    for (const raw of parts) {
      if (raw === '') continue;
      this.lastLines = [...this.lastLines.slice(-9), raw];
      try {
        const value: unknown = JSON.parse(raw);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) this.logs.push(value as ChildLogLine);
      } catch {
        this.logs.push({ msg: 'text', text: raw });
      }
    }
  }
}

export interface ChildReport {
  name: string;
  pid: number;
  /** `exit 0`, `signal SIGKILL`: how it ended (only a deliberate kill ends by a signal). */
  ended: string;
}

export function describeExit(exit: ChildExit): string {
  return exit.signal === null ? `exit ${exit.code}` : `signal ${exit.signal}`;
}

export class ShowcaseProcesses {
  private readonly children: ShowcaseChild[] = [];
  private readonly killOnExit = () => {
    for (const c of this.children) c.signal('SIGKILL');
  };

  constructor(
    private readonly runDir: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly abort: AbortSignal,
  ) {
    process.once('exit', this.killOnExit);
  }

  /** `amends <args>` as child `name`; `env` adds to the showcase's environment. */
  start(name: string, args: string[], env: Record<string, string> = {}): ShowcaseChild {
    const child = spawn(process.execPath, [join(packageRoot, 'bin', 'amends'), ...args], {
      cwd: packageRoot,
      env: { ...this.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // A child that is gone must not take the showcase with it through EPIPE.
    child.stdin?.on('error', () => {});
    const started = new ShowcaseChild(
      name,
      child,
      createWriteStream(join(this.runDir, `${name}.log`), { flags: 'a' }),
      this.abort,
    );
    this.children.push(started);
    return started;
  }

  /** The first child that died without being asked to. */
  unexpectedExit(): ShowcaseChild | undefined {
    return this.children.find((c) => c.exit !== undefined && !c.expectedExit);
  }

  /** Stops every child; returns how each one ended, for the report. */
  async stopAll(): Promise<ChildReport[]> {
    await Promise.all(this.children.map((c) => c.stop()));
    process.off('exit', this.killOnExit);
    return this.children.map((c) => ({
      name: c.name,
      pid: c.pid,
      ended: c.exit === undefined ? 'running' : describeExit(c.exit),
    }));
  }
}

/** One-shot `amendsctl <args>` from this package, its output collected. */
export function runAmendsctl(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(packageRoot, 'bin', 'amendsctl'), ...args], {
      cwd: packageRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('error', reject);
    child.once('close', (code, signal) =>
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
