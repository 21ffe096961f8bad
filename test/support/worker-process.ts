/**
 * Runs the built `amends worker` (bin/amends → dist/) as real child processes for the
 * end-to-end suites, and watches what they did from the outside: their stderr JSON lines,
 * the partitions and heartbeat rows in PostgreSQL, the broker's ends.
 *
 *   startWorker(…) ─▶ WorkerProcess (logs, waitForLog, stop(SIGTERM|SIGINT), kill → SIGKILL)
 *   StoreProbe     ─▶ partitions / heartbeats / decision offsets, waitForFrontiers
 *   createSource / loadFile ─▶ the real source-create and source-load, as a user runs them
 *
 * Every started process is remembered until it has exited: call `stopAllWorkers()` in
 * afterEach/afterAll (it SIGKILLs whatever still runs), and a process exit of the test runner
 * SIGKILLs stragglers too, so no worker outlives its test file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import type { Manifest } from '../../src/domain/config.js';
import { repoRoot, runAmendsctl } from './amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from './endpoints.js';

const workerBinary = join(repoRoot, 'bin/amends');
/** How long a stop (signal then wait) may take before the helper SIGKILLs and fails. */
const stopBudgetMs = 20_000;
const pollIntervalMs = 100;

/** The environment the processes see: the test endpoints and PATH, nothing inherited. */
export const workerEnv: Readonly<Record<string, string>> = {
  PATH: process.env.PATH ?? '',
  AMENDS_BROKERS: testBrokers,
  AMENDS_DATABASE_URL: testDatabaseUrl,
};

export interface WorkerOptions {
  manifestPath: string;
  /** --instance-id (static membership); omitted means a dynamic member. */
  instanceId?: string;
  batchSize?: number;
  sessionTimeoutMs?: number;
  /** Replaces `workerEnv` entirely (e.g. to drop AMENDS_DATABASE_URL). */
  env?: Record<string, string>;
  /** Appended after the flags above (e.g. an unknown flag). */
  extraArgs?: string[];
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One parsed stderr line; `raw` keeps the text (non-JSON lines have only `raw`). */
export type WorkerLogLine = Record<string, unknown> & { raw: string };

const live = new Set<WorkerProcess>();
/** Every worker this test process started (for StoreProbe.waitFor's early failure). */
const started = new Set<WorkerProcess>();

export class WorkerProcess {
  /** Parsed stderr lines, in order (each line once complete). */
  readonly logs: WorkerLogLine[] = [];
  stdout = '';
  stderr = '';
  /** Resolves when the process has exited and its pipes are closed. */
  readonly exited: Promise<WorkerExit>;
  /** The manifest's namespace, when the manifest could be read. */
  readonly namespace: string | undefined;
  private exit: WorkerExit | undefined;
  private partial = '';
  private signalled = false;

  private constructor(
    private readonly child: ChildProcess,
    readonly options: WorkerOptions,
  ) {
    try {
      this.namespace = (JSON.parse(readFileSync(options.manifestPath, 'utf8')) as Manifest).config.namespace;
    } catch {
      this.namespace = undefined;
    }
    child.stdout?.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => this.takeStderr(chunk.toString('utf8')));
    this.exited = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        if (this.partial !== '') this.takeStderr('\n');
        this.exit = { code, signal };
        live.delete(this);
        resolve(this.exit);
      });
    });
  }

  static start(options: WorkerOptions): WorkerProcess {
    const args = [workerBinary, 'worker', '--manifest', options.manifestPath];
    if (options.batchSize !== undefined) args.push('--batch-size', String(options.batchSize));
    if (options.instanceId !== undefined) args.push('--instance-id', options.instanceId);
    if (options.sessionTimeoutMs !== undefined) args.push('--session-timeout-ms', String(options.sessionTimeoutMs));
    args.push(...(options.extraArgs ?? []));
    const child = spawn(process.execPath, args, {
      cwd: repoRoot,
      env: options.env ?? { ...workerEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker = new WorkerProcess(child, options);
    live.add(worker);
    started.add(worker);
    return worker;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Whether it exited without the test sending it a signal (stop, kill). */
  get exitedUnasked(): boolean {
    return this.exit !== undefined && !this.signalled;
  }

  /** Undefined while the process runs. */
  get exitStatus(): WorkerExit | undefined {
    return this.exit;
  }

  /** The parsed JSON lines whose `msg` is `msg`. */
  messages(msg: string): WorkerLogLine[] {
    return this.logs.filter((l) => l.msg === msg);
  }

  /**
   * Waits for a stderr line matching `predicate` (looking at lines already seen first); fails
   * when the budget ends or the process exits without one.
   */
  async waitForLog(what: string, predicate: (line: WorkerLogLine) => boolean, budgetMs = 30_000) {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      const found = this.logs.find(predicate);
      if (found) return found;
      if (this.exit)
        throw new Error(`${what}: the worker exited (${describeExit(this.exit)}); stderr:\n${this.tail()}`);
      if (Date.now() > deadline) throw new Error(`${what}: not within ${budgetMs} ms; stderr:\n${this.tail()}`);
      await sleep(pollIntervalMs);
    }
  }

  /**
   * Sends `signal` and waits for the exit (see `waitForExit`). Returns the exit and how long
   * it took from the signal.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', budgetMs = stopBudgetMs): Promise<WorkerExit & { ms: number }> {
    if (this.exit) return { ...this.exit, ms: 0 };
    this.signalled = true;
    this.child.kill(signal);
    return this.waitForExit(budgetMs, `of ${signal}`);
  }

  /**
   * Waits for the process to exit by itself; SIGKILLs it and fails when it has not within
   * `budgetMs`. Returns the exit and how long the wait took.
   */
  async waitForExit(budgetMs = stopBudgetMs, since = 'of the wait'): Promise<WorkerExit & { ms: number }> {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), budgetMs);
    });
    const result = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') {
      this.signalled = true;
      this.child.kill('SIGKILL');
      await this.exited;
      throw new Error(`the worker did not exit within ${budgetMs} ms ${since}; stderr:\n${this.tail()}`);
    }
    return { ...result, ms: Date.now() - started };
  }

  /** kill -9, and waits until the process is gone. */
  async kill(): Promise<WorkerExit> {
    this.signalled = true;
    if (!this.exit) this.child.kill('SIGKILL');
    return this.exited;
  }

  /** The last stderr lines, for failure messages. */
  tail(lines = 30): string {
    return this.logs
      .slice(-lines)
      .map((l) => l.raw)
      .join('\n');
  }

  private takeStderr(text: string): void {
    this.stderr += text;
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    for (const raw of parts) {
      if (raw === '') continue;
      let parsed: Record<string, unknown> = {};
      try {
        const value: unknown = JSON.parse(raw);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          parsed = value as Record<string, unknown>;
        }
      } catch {
        // Not a JSON line (a diagnostic): kept as raw text only.
      }
      this.logs.push({ ...parsed, raw });
    }
  }
}

/** Starts `amends worker` with the test endpoints. */
export function startWorker(options: WorkerOptions): WorkerProcess {
  return WorkerProcess.start(options);
}

/** SIGKILLs every worker still running and waits for them: for afterEach/afterAll. */
export async function stopAllWorkers(): Promise<void> {
  await Promise.all([...live].map((w) => w.kill()));
}

// A test runner that exits (or crashes) must not leave workers behind.
process.once('exit', () => {
  for (const w of live) {
    try {
      process.kill(w.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

function describeExit(exit: WorkerExit): string {
  return exit.signal === null ? `code ${exit.code}` : `signal ${exit.signal}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------
// Sources: the real source-create and source-load.

export interface TestSource {
  namespace: string;
  topic: string;
  manifestPath: string;
  manifest: Manifest;
  /** The consumer group the workers join (worker.md §3). */
  groupId: string;
}

const scratch = mkdtempSync(join(tmpdir(), 'amends-test-worker-'));

/** A scratch file path (the directory is this process's own temporary directory). */
export function scratchFile(name: string, content: string): string {
  const path = join(scratch, name);
  writeFileSync(path, content);
  return path;
}

/**
 * A fresh topic and namespace (`amends-test-*`) made by `amendsctl source-create`; `topics`
 * collects the topic so the suite can delete it in afterAll.
 */
export async function createSource(topics: Set<string>, configPath?: string): Promise<TestSource> {
  const topic = testName();
  const namespace = testName();
  topics.add(topic);
  const args = ['source-create', '--namespace', namespace, '--topic', topic];
  if (configPath !== undefined) args.push('--config', configPath);
  const created = await runAmendsctl(args, { ...workerEnv });
  if (created.code !== 0) throw new Error(`source-create exited ${created.code}: ${created.stderr}`);
  const manifestPath = scratchFile(`${topic}.manifest.json`, created.stdout);
  return {
    namespace,
    topic,
    manifestPath,
    manifest: JSON.parse(created.stdout) as Manifest,
    groupId: `amends.${namespace}.source`,
  };
}

/**
 * `amendsctl source-load` of one file; returns, per partition written, the end after this
 * load (last printed offset + 1).
 */
export async function loadFile(source: TestSource, file: string): Promise<Map<number, number>> {
  const loaded = await runAmendsctl(['source-load', '--manifest', source.manifestPath, '--file', file], {
    ...workerEnv,
  });
  if (loaded.code !== 0) throw new Error(`source-load ${file} exited ${loaded.code}: ${loaded.stderr}`);
  const ends = new Map<number, number>();
  for (const m of loaded.stdout.matchAll(/-> partition (\d+) offset (\d+)/g)) {
    const partition = Number(m[1]);
    ends.set(partition, Math.max(ends.get(partition) ?? 0, Number(m[2]) + 1));
  }
  return ends;
}

/** `amendsctl <args>` with the test endpoints; fails on a non-zero exit; returns stdout. */
export async function amendsctl(args: string[]): Promise<string> {
  const result = await runAmendsctl(args, { ...workerEnv });
  if (result.code !== 0) throw new Error(`amendsctl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/**
 * What the workers committed (`export --what decisions` then `--what outputs`) and what
 * `simulate` derives offline from `inputFile`: equal byte for byte when the run was exact.
 */
export async function exportAndSimulate(
  source: TestSource,
  inputFile: string,
): Promise<{ exported: string; simulated: string }> {
  const m = source.manifestPath;
  const [decisions, outputs, simulated] = await Promise.all([
    amendsctl(['export', '--manifest', m, '--what', 'decisions']),
    amendsctl(['export', '--manifest', m, '--what', 'outputs']),
    amendsctl(['simulate', '--manifest', m, '--file', inputFile]),
  ]);
  return { exported: decisions + outputs, simulated };
}

/** Asserts export = simulate byte for byte (and that there is something to compare). */
export async function expectExportEqualsSimulate(source: TestSource, inputFile: string): Promise<void> {
  const { exported, simulated } = await exportAndSimulate(source, inputFile);
  expect(simulated.length).toBeGreaterThan(0);
  expect(exported).toBe(simulated);
}

// ---------------------------------------------------------------------------------------
// PostgreSQL, read from the outside.

export interface PartitionRow {
  partition: number;
  epoch: number;
  frontier: number;
  owner: string | null;
}

export interface HeartbeatRow {
  workerId: string;
  pid: number;
  /** The worker's heartbeat state (worker.ts heartbeatState): group, generation, partitions. */
  state: {
    group?: string;
    generation?: number;
    partitions?: { partition: number; state: string; epoch: number | null; frontier: number | null }[];
  };
  heartbeatAt: Date;
}

/** A small pool over the test database; `close()` in afterAll. */
export class StoreProbe {
  readonly pool: pg.Pool;

  /** `url`: another database or schema than the test database's default one. */
  constructor(url = testDatabaseUrl) {
    this.pool = new pg.Pool({ connectionString: url, max: 3 });
  }

  async partitions(namespace: string): Promise<PartitionRow[]> {
    const { rows } = await this.pool.query(
      'SELECT partition, epoch::text, frontier::text, owner FROM partitions WHERE namespace = $1 ORDER BY partition',
      [namespace],
    );
    return rows.map((r) => ({
      partition: r.partition,
      epoch: Number(r.epoch),
      frontier: Number(r.frontier),
      owner: r.owner,
    }));
  }

  async heartbeats(namespace: string): Promise<HeartbeatRow[]> {
    const { rows } = await this.pool.query(
      'SELECT worker_id, pid, state, heartbeat_at FROM worker_heartbeats WHERE namespace = $1 ORDER BY worker_id',
      [namespace],
    );
    return rows.map((r) => ({ workerId: r.worker_id, pid: r.pid, state: r.state, heartbeatAt: r.heartbeat_at }));
  }

  /** The decided offsets of one partition, ascending (duplicates would show twice). */
  async decisionOffsets(namespace: string, partition: number): Promise<number[]> {
    const { rows } = await this.pool.query(
      // Aliased: ORDER BY an output column named record_offset would sort the text.
      'SELECT record_offset::text AS o FROM decisions WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1) AND partition = $2 ORDER BY record_offset',
      [namespace, partition],
    );
    return rows.map((r) => Number(r.o));
  }

  /** Waits until every partition in `ends` has frontier = its end; returns the rows. */
  async waitForFrontiers(
    namespace: string,
    ends: ReadonlyMap<number, number>,
    budgetMs = 30_000,
  ): Promise<PartitionRow[]> {
    return this.waitFor(
      `frontiers of ${namespace} reach ${JSON.stringify([...ends])}`,
      namespace,
      (rows) => [...ends].every(([p, end]) => rows.find((r) => r.partition === p)?.frontier === end),
      budgetMs,
    );
  }

  /**
   * Polls the partitions rows until `check` holds; the failure names the last rows seen.
   * It fails at once when a worker of this namespace that the test did not stop or kill has
   * exited (its stderr tail is in the message), instead of waiting out the budget.
   */
  async waitFor(
    what: string,
    namespace: string,
    check: (rows: PartitionRow[]) => boolean,
    budgetMs = 30_000,
  ): Promise<PartitionRow[]> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      const rows = await this.partitions(namespace);
      if (check(rows)) return rows;
      const died = [...started].find((w) => w.namespace === namespace && w.exitedUnasked);
      if (died) {
        throw new Error(`${what}: a worker exited (${describeExit(died.exitStatus as WorkerExit)}):\n${died.tail()}`);
      }
      if (Date.now() > deadline)
        throw new Error(`${what}: not within ${budgetMs} ms; last rows ${JSON.stringify(rows)}`);
      await sleep(pollIntervalMs);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** Merges per-partition ends (the later load wins: ends only grow). */
export function mergeEnds(...all: ReadonlyMap<number, number>[]): Map<number, number> {
  const merged = new Map<number, number>();
  for (const ends of all) for (const [p, e] of ends) merged.set(p, Math.max(merged.get(p) ?? 0, e));
  return merged;
}
