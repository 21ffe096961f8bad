/**
 * The transport suites' harness: real `amends worker|relay|view` child processes (bin/amends
 * → dist/), the real amendsctl commands, and probes of PostgreSQL and the output topic from
 * the outside (straight pg and librdkafka, not amends' adapters).
 *
 *   startAmends('relay', manifest) ─▶ AmendsProcess (logs, waitForLog, stop, kill)
 *   createBoundSource(…)           ─▶ source-create + output-create, as a user runs them
 *   TransportProbe                 ─▶ outbox / view rows / view partitions, waits
 *   readOutputTopic(…)             ─▶ every record of the output topic
 *
 * Every started process is SIGKILLed by `stopAllAmends()` (afterEach) and on runner exit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import type { Manifest } from '../../src/domain/config.js';
import { exportViewLines } from '../../src/transport/output-view.js';
import { collectLines, exportOutputLines } from '../../src/verify/export-queries.js';
import { repoRoot, runAmendsctl } from './amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from './endpoints.js';
import { endOffsets, readPartition } from './kafka-test-tools.js';

const amendsBinary = join(repoRoot, 'bin/amends');
const stopBudgetMs = 20_000;
const pollMs = 100;

export const transportEnv: Readonly<Record<string, string>> = {
  PATH: process.env.PATH ?? '',
  AMENDS_BROKERS: testBrokers,
  AMENDS_DATABASE_URL: testDatabaseUrl,
};

export type LogLine = Record<string, unknown> & { raw: string };
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const live = new Set<AmendsProcess>();

export class AmendsProcess {
  readonly logs: LogLine[] = [];
  stderr = '';
  readonly exited: Promise<Exit>;
  exit: Exit | undefined;
  private partial = '';

  constructor(
    readonly role: string,
    private readonly child: ChildProcess,
  ) {
    child.stderr?.on('data', (chunk: Buffer) => this.take(chunk.toString('utf8')));
    child.stdout?.resume();
    this.exited = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        if (this.partial !== '') this.take('\n');
        this.exit = { code, signal };
        live.delete(this);
        resolve(this.exit);
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  messages(msg: string): LogLine[] {
    return this.logs.filter((l) => l.msg === msg);
  }

  async waitForLog(msg: string, budgetMs = 30_000, predicate: (l: LogLine) => boolean = () => true): Promise<LogLine> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      const found = this.logs.find((l) => l.msg === msg && predicate(l));
      if (found) return found;
      if (this.exit)
        throw new Error(`${this.role}: waiting for ${msg}, it exited ${JSON.stringify(this.exit)}:\n${this.tail()}`);
      if (Date.now() > deadline) throw new Error(`${this.role}: no ${msg} within ${budgetMs} ms:\n${this.tail()}`);
      await sleep(pollMs);
    }
  }

  async waitForExit(budgetMs = stopBudgetMs): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      this.exited,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), budgetMs);
      }),
    ]);
    clearTimeout(timer);
    if (result === 'timeout') {
      this.child.kill('SIGKILL');
      await this.exited;
      throw new Error(`${this.role} did not exit within ${budgetMs} ms:\n${this.tail()}`);
    }
    return result;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<Exit> {
    if (this.exit) return this.exit;
    this.child.kill(signal);
    return this.waitForExit();
  }

  async kill(): Promise<Exit> {
    if (!this.exit) this.child.kill('SIGKILL');
    return this.exited;
  }

  tail(lines = 20): string {
    return this.logs
      .slice(-lines)
      .map((l) => l.raw)
      .join('\n');
  }

  private take(text: string): void {
    this.stderr += text;
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    for (const raw of parts) {
      if (raw === '') continue;
      let parsed: Record<string, unknown> = {};
      try {
        const v: unknown = JSON.parse(raw);
        if (typeof v === 'object' && v !== null && !Array.isArray(v)) parsed = v as Record<string, unknown>;
      } catch {
        // a diagnostic line: raw only
      }
      this.logs.push({ ...parsed, raw });
    }
  }
}

/** `amends <role> --manifest M [args]` with the test endpoints (plus `env`). */
export function startAmends(
  role: 'worker' | 'relay' | 'view',
  manifestPath: string,
  args: string[] = [],
  env: Record<string, string> = {},
): AmendsProcess {
  const child = spawn(process.execPath, [amendsBinary, role, '--manifest', manifestPath, ...args], {
    cwd: repoRoot,
    env: { ...transportEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p = new AmendsProcess(role, child);
  live.add(p);
  return p;
}

/**
 * SIGTERMs relay/view processes together and expects exit 0 from each (transport.md: drain,
 * then 0). Workers are not stopped here: their shutdown is the worker suites' subject, and
 * afterEach SIGKILLs them.
 */
export async function expectCleanStop(...processes: AmendsProcess[]): Promise<void> {
  const exits = await Promise.all(processes.map((p) => p.stop('SIGTERM')));
  expect(exits.map((e, i) => `${processes[i]?.role}:${e.code}`)).toEqual(processes.map((p) => `${p.role}:0`));
}

export async function stopAllAmends(): Promise<void> {
  await Promise.all([...live].map((p) => p.kill()));
}

process.once('exit', () => {
  for (const p of live) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const scratch = mkdtempSync(join(tmpdir(), 'amends-test-transport-'));

export function scratchFile(name: string, content: string): string {
  const path = join(scratch, name);
  writeFileSync(path, content);
  return path;
}

export async function amendsctl(args: string[]): Promise<string> {
  const r = await runAmendsctl(args, { ...transportEnv });
  if (r.code !== 0) throw new Error(`amendsctl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

export interface BoundSource {
  namespace: string;
  topic: string;
  outputTopic: string;
  manifestPath: string;
  manifest: Manifest;
}

/** source-create (two partitions, `configPath`) then output-create; both topics go into `topics`. */
export async function createBoundSource(topics: Set<string>, configPath: string): Promise<BoundSource> {
  const topic = testName();
  const namespace = testName();
  const outputTopic = `${topic}-out`;
  topics.add(topic);
  const manifestText = await amendsctl([
    'source-create',
    '--namespace',
    namespace,
    '--topic',
    topic,
    '--config',
    configPath,
  ]);
  const manifestPath = scratchFile(`${topic}.manifest.json`, manifestText);
  topics.add(outputTopic);
  await amendsctl(['output-create', '--manifest', manifestPath, '--topic', outputTopic]);
  return { namespace, topic, outputTopic, manifestPath, manifest: JSON.parse(manifestText) as Manifest };
}

/** Loads fixture lines with source-load; returns how many records it published. */
export async function loadText(source: BoundSource, name: string, text: string): Promise<number> {
  await amendsctl([
    'source-load',
    '--manifest',
    source.manifestPath,
    '--file',
    scratchFile(`${source.topic}.${name}.jsonl`, text),
  ]);
  return text.split('\n').filter((l) => l !== '').length;
}

export interface ViewPartition {
  partition: number;
  frontier: number;
  applied: number;
  stale: number;
  duplicate: number;
}

/** Straight SQL over the test database. */
export class TransportProbe {
  readonly pool: pg.Pool;

  /** The shared test database, or another one (a private cluster's). */
  constructor(databaseUrl = testDatabaseUrl) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 3 });
  }

  async outbox(namespace: string): Promise<{ total: number; pending: number }> {
    const { rows } = await this.pool.query(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE NOT published)::int AS pending
         FROM outbox WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1)`,
      [namespace],
    );
    return { total: rows[0]?.total ?? 0, pending: rows[0]?.pending ?? 0 };
  }

  async viewPartitions(namespace: string): Promise<ViewPartition[]> {
    const { rows } = await this.pool.query(
      `SELECT partition, frontier::int, applied::int, stale::int, duplicate::int FROM view_partitions
        WHERE namespace = $1 ORDER BY partition`,
      [namespace],
    );
    return rows as ViewPartition[];
  }

  async until<T>(what: string, read: () => Promise<T>, check: (v: T) => boolean, budgetMs = 30_000): Promise<T> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      const v = await read();
      if (check(v)) return v;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${budgetMs} ms; last ${JSON.stringify(v)}`);
      await sleep(pollMs);
    }
  }

  /** Waits until the worker has decided `records` source records (then the outbox is complete). */
  async waitDecided(namespace: string, records: number, budgetMs?: number): Promise<void> {
    await this.until(
      `${records} decisions in ${namespace}`,
      async () => {
        const { rows } = await this.pool.query(
          'SELECT count(*)::int AS n FROM decisions WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1)',
          [namespace],
        );
        return (rows[0]?.n ?? 0) as number;
      },
      (n) => n === records,
      budgetMs,
    );
  }

  /** Waits until the outbox holds `total` rows, all published. */
  waitPublished(namespace: string, total: number, budgetMs?: number) {
    return this.until(
      `outbox of ${namespace}: ${total} rows published`,
      () => this.outbox(namespace),
      (o) => o.total === total && o.pending === 0,
      budgetMs,
    );
  }

  /** Waits until every view frontier equals the output topic's end (`ends`: read from the test broker). */
  async waitViewCaughtUp(source: BoundSource, budgetMs?: number, knownEnds?: number[]): Promise<ViewPartition[]> {
    const ends = knownEnds ?? (await endOffsets(source.outputTopic, source.manifest.config.partitions));
    return this.until(
      `view of ${source.namespace} reaches ${JSON.stringify(ends)}`,
      () => this.viewPartitions(source.namespace),
      (rows) => rows.length === ends.length && rows.every((r, i) => r.frontier === ends[i]),
      budgetMs,
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** Every record of the output topic, per partition in offset order. */
export async function readOutputTopic(source: BoundSource) {
  const ends = await endOffsets(source.outputTopic, source.manifest.config.partitions);
  const all = [];
  for (const [partition, end] of ends.entries()) {
    const records = await readPartition(source.outputTopic, partition, end);
    if (records.length !== end) throw new Error(`read ${records.length} of ${end} records of partition ${partition}`);
    all.push(...records);
  }
  return all;
}

/** `export --what view` (or outputs) in-process, through the same line generators the command uses. */
export async function exportInProcess(pool: pg.Pool, namespace: string, what: 'view' | 'outputs'): Promise<string[]> {
  return collectLines(what === 'view' ? exportViewLines(pool, namespace) : exportOutputLines(pool, namespace));
}
