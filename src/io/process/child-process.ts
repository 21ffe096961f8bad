/**
 * A child process watched by its parent: the showcase, the benchmark and the test suites run
 * `amends` and `amendsctl` this way. Its stderr JSON log lines are parsed as they come (or,
 * for a process that logs too much to pipe, written by the child straight to a file); a wait
 * for a log line has a budget and ends early when the child exits; a stop escalates to
 * SIGKILL when its budget ends. `runToEnd` runs a one-shot command and collects its output.
 *
 *   new WatchedChild({ command, args, stderr: 'lines' }) ─▶ logs, waitForLine, end, kill, tail
 *   LiveChildren                                         ─▶ SIGKILLs what runs when the parent exits
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, createWriteStream, openSync, type WriteStream } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { operationalError } from '../../kernel/amends-error.js';
import { pollUntil } from './poll-until.js';

/** The package's root (bin/, dist/, fixtures/): from src/io/process/ and from dist/ alike. */
export const packageRoot = resolvePath(fileURLToPath(new URL('../../..', import.meta.url)));

/** This package's own executable `bin/<name>`. */
export function packageBin(name: 'amends' | 'amendsctl'): string {
  return join(packageRoot, 'bin', name);
}

const logPollMs = 50;

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface TimedExit extends ChildExit {
  /** From the wait's start (the signal) to the exit. */
  ms: number;
  /** The budget ended first: the child was SIGKILLed. */
  overran: boolean;
}

/** One stderr line: its JSON members (none for a line that is not a JSON object), and its text. */
export type ChildLogLine = Record<string, unknown> & { raw: string };

export interface ChildOptions {
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** A pipe for `write` (the showcase's fault control channel); otherwise closed. */
  stdin?: 'pipe' | 'ignore';
  /**
   * 'lines': parsed into `logs`. `{ file }`: appended to by the child itself and never read
   * here (a worker logs a line per store attempt, which must not cost the parent a pipe).
   */
  stderr?: 'lines' | { file: string };
  /** Dropped, kept whole in `stdoutText`, or handed over line by line. */
  stdout?: 'ignore' | 'text' | ((line: string) => void);
  /** Both streams also appended to this file as they come. */
  copyTo?: string;
  /** Keep the whole stderr text in `stderrText` as well. */
  keepStderrText?: boolean;
  /** How many lines `tail()` gives and what joins them (' | ' keeps a diagnostic on one line). */
  tail?: { lines: number; separator: string };
  /** Ends every wait at once (Ctrl-C). */
  abort?: AbortSignal;
}

/** `exit 0`, `signal SIGKILL`. */
export function describeExit(exit: ChildExit): string {
  return exit.signal === null ? `exit ${exit.code}` : `signal ${exit.signal}`;
}

export class WatchedChild {
  readonly name: string;
  /** Parsed stderr lines, in order, each once complete. */
  readonly logs: ChildLogLine[] = [];
  stderrText = '';
  stdoutText = '';
  /** Resolves when the child has exited and its pipes are closed. */
  readonly exited: Promise<ChildExit>;
  /** Undefined while it runs. */
  exit: ChildExit | undefined;
  /** Set when the parent ends it on purpose (or says it will), so its exit is not a failure. */
  expectedExit = false;
  protected readonly child: ChildProcess;
  private partial = '';
  private readonly keepStderrText: boolean;
  private readonly tailShape: { lines: number; separator: string };
  private readonly abort: AbortSignal | undefined;

  constructor(options: ChildOptions) {
    this.name = options.name;
    this.keepStderrText = options.keepStderrText ?? false;
    this.tailShape = options.tail ?? { lines: 20, separator: '\n' };
    this.abort = options.abort;
    const copy = options.copyTo === undefined ? undefined : createWriteStream(options.copyTo, { flags: 'a' });
    this.child = spawnWatched(options, copy !== undefined);
    // A child that is gone must not take the parent with it through EPIPE.
    this.child.stdin?.on('error', () => {});
    this.child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      copy?.write(text);
      this.takeStderr(text);
    });
    this.watchStdout(options.stdout ?? 'ignore', copy);
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        // A last line without its newline (a process killed mid-write) still counts.
        if (this.partial !== '') this.logs.push(logLineOf(this.partial));
        this.exit = { code, signal };
        copy?.end();
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

  /** A line on the child's stdin (it must have been started with `stdin: 'pipe'`). */
  write(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  /** Sends `signal` unless the child has exited. */
  signal(signal: NodeJS.Signals): void {
    if (this.exit === undefined) this.child.kill(signal);
  }

  /** The parsed lines whose `msg` is `msg`. */
  messages(msg: string): ChildLogLine[] {
    return this.logs.filter((l) => l.msg === msg);
  }

  /** The first log line (from index `from` on) that matches; fails when the child exits first or the budget ends. */
  waitForLine(
    what: string,
    matches: (line: ChildLogLine) => boolean,
    budgetMs: number,
    from = 0,
  ): Promise<ChildLogLine> {
    let next = from;
    const find = (): ChildLogLine | undefined => {
      for (; next < this.logs.length; next++) {
        const line = this.logs[next] as ChildLogLine;
        if (matches(line)) return line;
      }
      return undefined;
    };
    return pollUntil(what, find, {
      budgetMs,
      pollMs: logPollMs,
      signal: this.abort,
      label: this.name,
      lastSeen: () => this.tail(),
      failEarly: () => {
        if (this.exit !== undefined) {
          throw operationalError(`${this.name} exited (${describeExit(this.exit)}) before ${what}: ${this.tail()}`);
        }
      },
    });
  }

  /** Sends `signal` and waits for the exit, SIGKILL past `budgetMs`; an exited child's exit at once. */
  async end(signal: NodeJS.Signals, budgetMs: number): Promise<TimedExit> {
    if (this.exit !== undefined) return { ...this.exit, ms: 0, overran: false };
    this.expectedExit = true;
    this.child.kill(signal);
    return this.exitWithin(budgetMs);
  }

  /** Waits up to `budgetMs` for the exit; past it SIGKILLs the child and waits for that. */
  async exitWithin(budgetMs: number): Promise<TimedExit> {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), budgetMs);
    });
    const result = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (result !== 'timeout') return { ...result, ms: Date.now() - started, overran: false };
    this.expectedExit = true;
    this.child.kill('SIGKILL');
    const exit = await this.exited;
    return { ...exit, ms: Date.now() - started, overran: true };
  }

  /** SIGKILL (what a crash looks like); resolves when the child is gone. */
  kill(): Promise<ChildExit> {
    this.expectedExit = true;
    this.signal('SIGKILL');
    return this.exited;
  }

  /** The last stderr lines, for a diagnostic. */
  tail(lines = this.tailShape.lines): string {
    return this.logs
      .slice(-lines)
      .map((l) => l.raw)
      .join(this.tailShape.separator);
  }

  private watchStdout(mode: NonNullable<ChildOptions['stdout']>, copy: WriteStream | undefined): void {
    const stdout = this.child.stdout;
    if (stdout === null) return;
    stdout.setEncoding('utf8');
    if (copy !== undefined) stdout.on('data', (text: string) => copy.write(text));
    if (mode === 'text') {
      stdout.on('data', (text: string) => {
        this.stdoutText += text;
      });
    } else if (typeof mode === 'function') {
      createInterface({ input: stdout }).on('line', mode);
    }
  }

  private takeStderr(text: string): void {
    if (this.keepStderrText) this.stderrText += text;
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    for (const raw of parts) if (raw !== '') this.logs.push(logLineOf(raw));
  }
}

function spawnWatched(options: ChildOptions, copied: boolean): ChildProcess {
  const stderrFile = typeof options.stderr === 'object' ? openSync(options.stderr.file, 'a') : undefined;
  const stdoutPiped = copied || (options.stdout ?? 'ignore') !== 'ignore';
  try {
    return spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.stdin ?? 'ignore', stdoutPiped ? 'pipe' : 'ignore', stderrFile ?? 'pipe'],
    });
  } finally {
    // The child holds its own copy of the descriptor.
    if (stderrFile !== undefined) closeSync(stderrFile);
  }
}

function logLineOf(raw: string): ChildLogLine {
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { ...value, raw };
  } catch {
    // Not a JSON line (a diagnostic): its text only.
  }
  return { raw };
}

/** Children still running; whatever runs when the parent process exits is SIGKILLed. */
export class LiveChildren<C extends WatchedChild = WatchedChild> {
  private readonly live = new Set<C>();
  private readonly killOnExit = () => {
    for (const child of this.live) child.signal('SIGKILL');
  };

  constructor() {
    process.once('exit', this.killOnExit);
  }

  add(child: C): C {
    this.live.add(child);
    void child.exited.then(() => this.live.delete(child));
    return child;
  }

  /** The children that have not exited yet. */
  running(): C[] {
    return [...this.live];
  }

  /** SIGKILLs every child still running and waits for them. */
  async killAll(): Promise<void> {
    await Promise.all(this.running().map((c) => c.kill()));
  }

  /** No more SIGKILL on the parent's exit (every child has been stopped). */
  release(): void {
    process.off('exit', this.killOnExit);
  }
}

export interface ChildOutput extends ChildExit {
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, collecting its output; past `timeoutMs`, SIGKILLs it and rejects. */
export function runToEnd(
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; label?: string },
): Promise<ChildOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const stderr = () => Buffer.concat(err).toString('utf8');
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            child.kill('SIGKILL');
            const label = options.label ?? command;
            reject(new Error(`${label} did not exit within ${options.timeoutMs} ms; stderr: ${stderr()}`));
          }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: stderr() });
    });
  });
}
