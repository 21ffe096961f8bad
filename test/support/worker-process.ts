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
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import type { Manifest } from '../../src/domain/config.js';
import {
  type ChildExit,
  type ChildLogLine,
  describeExit,
  LiveChildren,
  packageBin,
  type TimedExit,
  WatchedChild,
} from '../../src/io/process/child-process.js';
import { pollUntil } from '../../src/io/process/poll-until.js';
import { type PartitionProgress, readPartitionProgress } from '../../src/io/transport/chain-probe.js';
import { repoRoot, runAmendsctl } from './amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from './endpoints.js';

/** How long a stop (signal then wait) may take before the helper SIGKILLs and fails. */
const stopBudgetMs = 20_000;
const waitBudgetMs = 30_000;
const pollIntervalMs = 100;

/** The environment the processes see: the test endpoints and PATH, nothing inherited. */
export const workerEnv: Readonly<Record<string, string>> = {
  PATH: process.env.PATH ?? '',
  AMENDS_BROKERS: testBrokers,
  AMENDS_DATABASE_URL: testDatabaseUrl,
  // The suites read the lines of each store attempt, relay batch and view poll: debug lines.
  AMENDS_LOG_LEVEL: 'debug',
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

export type WorkerExit = ChildExit;

/** One parsed stderr line; `raw` keeps the text (non-JSON lines have only `raw`). */
export type WorkerLogLine = ChildLogLine;

const live = new LiveChildren<WorkerProcess>();
/** Every worker this test process started (for StoreProbe.waitFor's early failure). */
const started = new Set<WorkerProcess>();

export class WorkerProcess extends WatchedChild {
  /** The manifest's namespace, when the manifest could be read. */
  readonly namespace: string | undefined;

  private constructor(readonly options: WorkerOptions) {
    super({
      name: 'the worker',
      command: process.execPath,
      args: workerArgs(options),
      cwd: repoRoot,
      env: options.env ?? { ...workerEnv },
      stderr: 'lines',
      stdout: 'text',
      keepStderrText: true,
      tail: { lines: 30, separator: '\n' },
    });
    try {
      this.namespace = (JSON.parse(readFileSync(options.manifestPath, 'utf8')) as Manifest).config.namespace;
    } catch {
      this.namespace = undefined;
    }
  }

  static start(options: WorkerOptions): WorkerProcess {
    const worker = live.add(new WorkerProcess(options));
    started.add(worker);
    return worker;
  }

  get stdout(): string {
    return this.stdoutText;
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Whether it exited without the test sending it a signal (stop, kill) or waiting for its exit. */
  get exitedUnasked(): boolean {
    return this.exit !== undefined && !this.expectedExit;
  }

  /** Undefined while the process runs. */
  get exitStatus(): WorkerExit | undefined {
    return this.exit;
  }

  /**
   * Waits for a stderr line matching `predicate` (looking at lines already seen first); fails
   * when the budget ends or the process exits without one.
   */
  waitForLog(what: string, predicate: (line: WorkerLogLine) => boolean, budgetMs = waitBudgetMs) {
    return this.waitForLine(what, predicate, budgetMs);
  }

  /**
   * Sends `signal` and waits for the exit (see `waitForExit`). Returns the exit and how long
   * it took from the signal.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', budgetMs = stopBudgetMs): Promise<WorkerExit & { ms: number }> {
    const ended = await this.end(signal, budgetMs);
    return this.withinBudget(ended, budgetMs, `of ${signal}`);
  }

  /**
   * Waits for the process to exit by itself; SIGKILLs it and fails when it has not within
   * `budgetMs`. Returns the exit and how long the wait took.
   */
  async waitForExit(budgetMs = stopBudgetMs, since = 'of the wait'): Promise<WorkerExit & { ms: number }> {
    const ended = this.withinBudget(await this.exitWithin(budgetMs), budgetMs, since);
    // Awaited, so expected: a later StoreProbe.waitFor must not take it for a worker that died.
    this.expectedExit = true;
    return ended;
  }

  private withinBudget(ended: TimedExit, budgetMs: number, since: string): WorkerExit & { ms: number } {
    if (ended.overran) {
      throw new Error(`the worker did not exit within ${budgetMs} ms ${since}; stderr:\n${this.tail()}`);
    }
    return { code: ended.code, signal: ended.signal, ms: ended.ms };
  }
}

function workerArgs(options: WorkerOptions): string[] {
  const args = [packageBin('amends'), 'worker', '--manifest', options.manifestPath];
  if (options.batchSize !== undefined) args.push('--batch-size', String(options.batchSize));
  if (options.instanceId !== undefined) args.push('--instance-id', options.instanceId);
  if (options.sessionTimeoutMs !== undefined) args.push('--session-timeout-ms', String(options.sessionTimeoutMs));
  args.push(...(options.extraArgs ?? []));
  return args;
}

/** Starts `amends worker` with the test endpoints. */
export function startWorker(options: WorkerOptions): WorkerProcess {
  return WorkerProcess.start(options);
}

/** SIGKILLs every worker still running and waits for them: for afterEach/afterAll. */
export async function stopAllWorkers(): Promise<void> {
  await live.killAll();
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

export type PartitionRow = PartitionProgress;

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

  partitions(namespace: string): Promise<PartitionRow[]> {
    return readPartitionProgress(this.pool, namespace);
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
    budgetMs = waitBudgetMs,
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
    budgetMs = waitBudgetMs,
  ): Promise<PartitionRow[]> {
    let last: PartitionRow[] = [];
    return pollUntil(
      what,
      async () => {
        last = await this.partitions(namespace);
        return check(last) ? last : undefined;
      },
      {
        budgetMs,
        pollMs: pollIntervalMs,
        lastSeen: () => `last rows ${JSON.stringify(last)}`,
        failEarly: () => {
          const died = [...started].find((w) => w.namespace === namespace && w.exitedUnasked);
          if (died) {
            throw new Error(
              `${what}: a worker exited (${describeExit(died.exitStatus as WorkerExit)}):\n${died.tail()}`,
            );
          }
        },
      },
    );
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
