/**
 * The transport suites' harness: real `amends worker|relay|view` child processes (bin/amends
 * → dist/, watched as child-process.ts does for the showcase and the benchmark), the real
 * amendsctl commands, and probes of PostgreSQL and the output topic from the outside: the
 * read-only chain probe (chain-probe.ts) over a pool of its own, the output topic read with
 * straight librdkafka.
 *
 *   startAmends('relay', manifest) ─▶ AmendsProcess (logs, waitForLog, stop, kill)
 *   createBoundSource(…)           ─▶ source-create + output-create, as a user runs them
 *   TransportProbe                 ─▶ decisions / outbox / view partitions, waits
 *   readOutputTopic(…)             ─▶ every record of the output topic
 *
 * Every started process is SIGKILLed by `stopAllAmends()` (afterEach) and on runner exit.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { Manifest } from '../../src/domain/config.js';
import {
  type ChildExit,
  type ChildLogLine,
  LiveChildren,
  packageBin,
  WatchedChild,
} from '../../src/io/process/child-process.js';
import { pollUntil } from '../../src/io/process/poll-until.js';
import { type OutboxProgress, readDecisionCount, readOutboxProgress } from '../../src/io/transport/chain-probe.js';
import { exportViewLines, readViewPartitions, type ViewPartitionRow } from '../../src/io/transport/view-queries.js';
import { collectLines, exportOutputLines } from '../../src/verify/export-queries.js';
import { repoRoot, requireBuild, runAmendsctl } from './amendsctl-process.js';
import { testBrokers, testDatabaseUrl, testName } from './endpoints.js';
import { deleteTestTopics, endOffsets, readPartition } from './kafka-test-tools.js';

const stopBudgetMs = 20_000;
const waitBudgetMs = 30_000;
const pollMs = 100;

export const transportEnv: Readonly<Record<string, string>> = {
  PATH: process.env.PATH ?? '',
  AMENDS_BROKERS: testBrokers,
  AMENDS_DATABASE_URL: testDatabaseUrl,
  // The suites read the lines of each store attempt, relay batch and view poll: debug lines.
  AMENDS_LOG_LEVEL: 'debug',
};

export type LogLine = ChildLogLine;
export type Exit = ChildExit;

const live = new LiveChildren<AmendsProcess>();

export class AmendsProcess extends WatchedChild {
  constructor(
    readonly role: string,
    args: string[],
    env: Record<string, string>,
  ) {
    super({
      name: role,
      command: process.execPath,
      args: [packageBin('amends'), role, ...args],
      cwd: repoRoot,
      env: { ...transportEnv, ...env },
      stderr: 'lines',
      stdout: 'text',
      keepStderrText: true,
    });
  }

  /** Everything it wrote on stderr so far. */
  get stderr(): string {
    return this.stderrText;
  }

  /** Everything it wrote on stdout so far (nothing: its log is on stderr). */
  get stdout(): string {
    return this.stdoutText;
  }

  /** The first line whose `msg` is `msg` (and that `predicate` accepts). */
  waitForLog(msg: string, budgetMs = waitBudgetMs, predicate: (l: LogLine) => boolean = () => true): Promise<LogLine> {
    return this.waitForLine(msg, (l) => l.msg === msg && predicate(l), budgetMs);
  }

  /** The exit; SIGKILLs the process and fails when it has not exited within `budgetMs`. */
  async waitForExit(budgetMs = stopBudgetMs): Promise<Exit> {
    const { code, signal, overran } = await this.exitWithin(budgetMs);
    if (overran) throw new Error(`${this.role} did not exit within ${budgetMs} ms:\n${this.tail()}`);
    return { code, signal };
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<Exit> {
    if (this.exit) return this.exit;
    this.signal(signal);
    return this.waitForExit();
  }
}

/** `amends <role> --manifest M [args]` with the test endpoints (plus `env`). */
export function startAmends(
  role: 'worker' | 'relay' | 'view',
  manifestPath: string,
  args: string[] = [],
  env: Record<string, string> = {},
): AmendsProcess {
  return live.add(new AmendsProcess(role, ['--manifest', manifestPath, ...args], env));
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
  await live.killAll();
}

/**
 * A transport suite's hooks: the build checked first, every process SIGKILLed after each
 * test, and at the end the probe closed and the suite's topics deleted.
 */
export function transportSuite(): { topics: Set<string>; probe: TransportProbe } {
  const topics = new Set<string>();
  const probe = new TransportProbe();
  beforeAll(() => requireBuild());
  afterEach(() => stopAllAmends());
  afterAll(async () => {
    await stopAllAmends();
    await probe.close();
    await deleteTestTopics(topics);
  });
  return { topics, probe };
}

const scratch = mkdtempSync(join(tmpdir(), 'amends-test-transport-'));

export function scratchFile(name: string, content: string): string {
  const path = join(scratch, name);
  writeFileSync(path, content);
  return path;
}

/** `env` adds to (or overrides) the test endpoints, e.g. another database's URL. */
export async function amendsctl(args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await runAmendsctl(args, { ...transportEnv, ...env });
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

/** source-create (`partitions`, `configPath`) then output-create; both topics go into `topics`. */
export async function createBoundSource(
  topics: Set<string>,
  configPath: string,
  partitions = 2,
  env: Record<string, string> = {},
): Promise<BoundSource> {
  const topic = testName();
  const namespace = testName();
  const outputTopic = `${topic}-out`;
  topics.add(topic);
  const manifestText = await amendsctl(
    [
      'source-create',
      '--namespace',
      namespace,
      '--topic',
      topic,
      '--config',
      configPath,
      '--partitions',
      String(partitions),
    ],
    env,
  );
  const manifestPath = scratchFile(`${topic}.manifest.json`, manifestText);
  topics.add(outputTopic);
  await amendsctl(['output-create', '--manifest', manifestPath, '--topic', outputTopic], env);
  return { namespace, topic, outputTopic, manifestPath, manifest: JSON.parse(manifestText) as Manifest };
}

/** Loads fixture lines with source-load; returns how many records it published. */
export async function loadText(
  source: BoundSource,
  name: string,
  text: string,
  env: Record<string, string> = {},
): Promise<number> {
  const file = scratchFile(`${source.topic}.${name}.jsonl`, text);
  await amendsctl(['source-load', '--manifest', source.manifestPath, '--file', file], env);
  return text.split('\n').filter((l) => l !== '').length;
}

export type ViewPartition = ViewPartitionRow;

/** The chain's progress in the test database (chain-probe.ts), and waits on it. */
export class TransportProbe {
  readonly pool: pg.Pool;

  /** The shared test database, or another one (a private cluster's). */
  constructor(databaseUrl = testDatabaseUrl) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 3 });
  }

  outbox(namespace: string): Promise<OutboxProgress> {
    return readOutboxProgress(this.pool, namespace);
  }

  viewPartitions(namespace: string): Promise<ViewPartition[]> {
    return readViewPartitions(this.pool, namespace);
  }

  /** Reads until `check` accepts what `read` returned; fails with the last value past the budget. */
  async until<T>(what: string, read: () => Promise<T>, check: (v: T) => boolean, budgetMs = waitBudgetMs): Promise<T> {
    let last: T | undefined;
    const found = await pollUntil(
      what,
      async () => {
        last = await read();
        return check(last) ? { value: last } : undefined;
      },
      { budgetMs, pollMs, lastSeen: () => `last ${JSON.stringify(last)}` },
    );
    return found.value;
  }

  /** Waits until the worker has decided `records` source records (then the outbox is complete). */
  async waitDecided(namespace: string, records: number, budgetMs?: number): Promise<void> {
    await this.until(
      `${records} decisions in ${namespace}`,
      () => readDecisionCount(this.pool, namespace),
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
