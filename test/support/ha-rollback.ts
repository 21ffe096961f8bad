/**
 * Taking the private HA database back in time (issue 33 item 3), with the tools an operator
 * has: Patroni's asynchronous replication with a standby that is certain to lack the last
 * commits (its WAL sender stopped with SIGSTOP, so nothing after that point reaches it),
 * then the primary's postmaster SIGKILLed; and a base backup (pg_basebackup) restored in place
 * of the primary's data directory while the processes run, with Patroni paused as an
 * operator pauses it for a restore. And the amends chain that lives through it: two workers,
 * the relay and the view, real processes from dist/ against the shared broker.
 */
import { chownSync, mkdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { expect } from 'vitest';
import { readDecisionCount, readPartitionProgress } from '../../src/io/transport/chain-probe.js';
import { Prng } from '../simulation/prng.js';
import { repoRoot, runAmendsctl } from './amendsctl-process.js';
import { endOffsets } from './kafka-test-tools.js';
import { ledgerChunk } from './ledger-chunk.js';
import type { PrivateHaStack } from './private-ha-stack.js';
import {
  type AmendsProcess,
  type BoundSource,
  createBoundSource,
  loadText,
  startAmends,
  TransportProbe,
  transportEnv,
} from './transport-process.js';

/**
 * With asynchronous replication a standby further behind than this is no failover candidate
 * (Patroni's default is 1 MiB): a two-node test cluster must fail over to the one it has.
 */
const asyncMaxLagBytes = 64 * 1024 * 1024;
const replicationPassword = 'amends-local-only';
const waitMs = 60_000;
const twoKeysConfig = join(repoRoot, 'fixtures', 'two-keys.config.json');
const keys = [
  { item: 'widget', location: 'berlin' },
  { item: 'gadget', location: 'paris' },
];

/** One statement on a fresh connection; an error of the idle client (its server died) is nobody's. */
export async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, query_timeout: 5_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Reads until `check` accepts; a read that fails (the database is away) counts as not yet. */
export async function until<T>(what: string, read: () => Promise<T>, check: (v: T) => boolean, budgetMs = waitMs) {
  const deadline = Date.now() + budgetMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await read();
      if (check(value)) return value;
      last = value;
    } catch (error) {
      last = error instanceof Error ? error.message : error;
    }
    if (Date.now() > deadline) throw new Error(`no ${what} within ${budgetMs} ms: last ${JSON.stringify(last)}`);
    await sleep(200);
  }
}

/** The node the usual URL reaches and whether it takes writes. */
export function primaryAnswering(url: string): Promise<{ port: number }> {
  return until(
    'primary answering',
    async () =>
      (
        await query<{ port: number; recovery: boolean }>(
          url,
          'SELECT inet_server_port() AS port, pg_is_in_recovery() AS recovery',
        )
      )[0],
    (row) => row?.recovery === false,
  ) as Promise<{ port: number }>;
}

/** The node (`node-N`) and address Patroni names primary. */
export async function primaryOf(stack: PrivateHaStack): Promise<{ name: string; port: number }> {
  const primary = (await stack.status()).nodes.find((n) => n.role === 'primary');
  if (primary === undefined) throw new Error('the HA database has no primary');
  return { name: primary.name, port: Number(primary.address.split(':')[1]) };
}

/**
 * Asynchronous replication (`synchronous_mode: false`): a commit is acknowledged before any
 * standby has it. Waits until the primary streams to its standby asynchronously, the old
 * primary of an earlier failover having rejoined (pg_rewind) first.
 */
export async function replicateAsynchronously(stack: PrivateHaStack): Promise<void> {
  const lag = `maximum_lag_on_failover=${asyncMaxLagBytes}`;
  await stack.patronictl(['edit-config', '--force', '--quiet', '-s', 'synchronous_mode=false', '-s', lag]);
  await until(
    'asynchronous standby streaming',
    () =>
      query<{ state: string; sync_state: string }>(
        stack.superuserUrl,
        'SELECT state, sync_state FROM pg_stat_replication',
      ),
    (rows) => rows.length === 1 && rows[0]?.state === 'streaming' && rows[0]?.sync_state === 'async',
  );
}

/**
 * Waits until the standby has replayed everything the primary wrote so far, then stops the
 * primary's WAL sender (SIGSTOP): what the primary commits from now on is certain not to be
 * on the standby. Returns the WAL sender's pid (for the crash).
 */
export async function stallReplication(stack: PrivateHaStack): Promise<number> {
  const [{ lsn } = { lsn: '' }] = await query<{ lsn: string }>(
    stack.superuserUrl,
    'SELECT pg_current_wal_lsn() AS lsn',
  );
  const [sender] = await until(
    'standby replayed the primary',
    () =>
      query<{ pid: number }>(stack.superuserUrl, 'SELECT pid FROM pg_stat_replication WHERE replay_lsn >= $1::pg_lsn', [
        lsn,
      ]),
    (rows) => rows.length === 1,
  );
  process.kill(sender?.pid ?? 0, 'SIGSTOP');
  return sender?.pid ?? 0;
}

/** SIGKILL of the primary's postmaster, then of `alsoKill` (the stopped WAL sender): the host dies. */
export async function crashPrimary(stack: PrivateHaStack, alsoKill: number[]): Promise<string> {
  const { name } = await primaryOf(stack);
  const pid = Number(readFileSync(join(stack.nodeDir(name), 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGKILL');
  for (const other of alsoKill) process.kill(other, 'SIGKILL');
  return name;
}

/**
 * The crashed primary's host stays away: its Patroni is SIGKILLed too (once the standby took
 * over), so it does not rejoin (pg_rewind, a restart) under what follows; `down` stops a
 * PostgreSQL it may have started meanwhile.
 */
export function stopNode(stack: PrivateHaStack, name: string): void {
  const dir = stack.nodeDir(name);
  const pid = Number(readFileSync(join(dir, 'pid'), 'utf8').trim());
  // A recycled pid is never taken for Patroni's: its command line names the node's directory.
  if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`${dir}/`)) process.kill(pid, 'SIGKILL');
}

/**
 * A base backup of node `name` (pg_basebackup, WAL streamed along, a fast checkpoint) into
 * the node's `backup/` directory, as an operator takes one; returns the directory.
 */
export async function baseBackup(stack: PrivateHaStack, node: { name: string; port: number }): Promise<string> {
  const dir = join(stack.nodeDir(node.name), 'backup');
  mkdirSync(dir, { mode: 0o700 });
  const owner = statSync(stack.nodeDir(node.name));
  chownSync(dir, owner.uid, owner.gid);
  const connection = ['-h', '127.0.0.1', '-p', String(node.port), '-U', 'replicator', '-w'];
  await stack.asNodeUser('pg_basebackup', [...connection, '-D', dir, '-X', 'stream', '-c', 'fast'], {
    PGPASSWORD: replicationPassword,
  });
  return dir;
}

/**
 * Restores `backup` as node `name`'s data directory while everything runs: the node's
 * PostgreSQL stopped at once (`-m immediate`), the data directory swapped, the server started
 * again with the options Patroni gave it (postmaster.opts). Patroni is paused first, as for
 * any restore it must not undo.
 */
export async function restoreBackup(
  stack: PrivateHaStack,
  node: { name: string; port: number },
  backup: string,
): Promise<void> {
  await stack.patronictl(['pause']);
  // The node's Patroni must know before its PostgreSQL stops (its REST API is on the next port).
  await until(
    `${node.name} paused`,
    async () =>
      ((await (await fetch(`http://127.0.0.1:${node.port + 1}/patroni`)).json()) as { pause?: boolean }).pause,
    (paused) => paused === true,
  );
  const dir = stack.nodeDir(node.name);
  const data = join(dir, 'data');
  // `postgres "-D" "<data>" "--port=…" …`: everything after the data directory.
  const opts = [...readFileSync(join(data, 'postmaster.opts'), 'utf8').matchAll(/"([^"]*)"/g)].map((m) => m[1]);
  await stack.asNodeUser('pg_ctl', ['-D', data, 'stop', '-m', 'immediate']);
  renameSync(data, join(dir, 'data.lost'));
  renameSync(backup, data);
  await stack.asNodeUser('pg_ctl', [
    '-D',
    data,
    '-w',
    '-t',
    '60',
    '-l',
    join(dir, 'restore.log'),
    '-o',
    opts.slice(2).join(' '),
    'start',
  ]);
}

/** What the database holds of the chain's positions, per partition. */
export interface Positions {
  frontiers: number[];
  view: number[];
}

/** The amends chain on the HA database: workers, relay and view, loads, waits and verify. */
export class RollbackChain {
  readonly processes: AmendsProcess[] = [];
  readonly probe: TransportProbe;
  private records = 0;
  private chunks = 0;
  private readonly prng = new Prng(33);

  private constructor(
    readonly source: BoundSource,
    readonly databaseUrl: string,
  ) {
    this.probe = new TransportProbe(databaseUrl);
    // The database goes away under it: an idle client's error is expected, never fatal.
    this.probe.pool.on('error', () => {});
  }

  /** A bound source and output topic, one worker, the relay and the view. */
  static async start(topics: Set<string>, databaseUrl: string): Promise<RollbackChain> {
    const env = { AMENDS_DATABASE_URL: databaseUrl };
    const chain = new RollbackChain(await createBoundSource(topics, twoKeysConfig, 2, env), databaseUrl);
    for (const role of ['worker', 'relay', 'view'] as const) chain.startProcess(role);
    return chain;
  }

  get env(): Record<string, string> {
    return { AMENDS_DATABASE_URL: this.databaseUrl };
  }

  startProcess(role: 'worker' | 'relay' | 'view'): AmendsProcess {
    const args = role === 'worker' ? ['--batch-size', '20'] : [];
    const started = startAmends(role, this.source.manifestPath, args, this.env);
    this.processes.push(started);
    return started;
  }

  /** Publishes a seeded chunk of `records` source records (returns once source-load is done). */
  async load(records: number): Promise<void> {
    this.chunks += 1;
    const name = `R${this.chunks}`;
    this.records += await loadText(this.source, name, ledgerChunk(this.prng, keys, name, records, 60), this.env);
  }

  /** Everything loaded is decided, published and in the view (its frontiers at the topic's ends). */
  async waitDrained(budgetMs = waitMs): Promise<void> {
    // Reads that fail count as not yet: right after a failover a read can meet a node that is
    // still starting up (the processes ride that, and so does the wait).
    const { namespace } = this.source;
    await until(
      `${this.records} decisions`,
      () => this.decisions(),
      (n) => n === this.records,
      budgetMs,
    );
    await until(
      'the outbox published',
      () => this.probe.outbox(namespace),
      (o) => o.pending === 0,
      budgetMs,
    );
    const ends = await endOffsets(this.source.outputTopic, this.source.manifest.config.partitions);
    await until(
      `the view at the output topic's ends ${JSON.stringify(ends)}`,
      () => this.probe.viewPartitions(namespace),
      (rows) => rows.length === ends.length && rows.every((r, i) => r.frontier === ends[i]),
      budgetMs,
    );
  }

  decisions(url = this.databaseUrl): Promise<number> {
    return withPool(url, (pool) => readDecisionCount(pool, this.source.namespace));
  }

  epochs(url = this.databaseUrl): Promise<number[]> {
    return withPool(url, async (pool) =>
      (await readPartitionProgress(pool, this.source.namespace)).map((p) => p.epoch),
    );
  }

  /** The positions the database holds: each partition's frontier and the view's. */
  async positions(): Promise<Positions> {
    const frontiers = await withPool(this.databaseUrl, (pool) => readPartitionProgress(pool, this.source.namespace));
    const view = await this.probe.viewPartitions(this.source.namespace);
    return { frontiers: frontiers.map((p) => p.frontier), view: view.map((p) => p.frontier) };
  }

  /**
   * Since `sinceMs`, some worker claimed a partition at a frontier below the one `before`
   * held, and the view took up its work at a frontier below its own of before: the processes
   * met the database that went back in time (what they read, not a count that their healing
   * may already have restored).
   */
  expectWentBack(before: Positions, sinceMs: number): void {
    const lines = (role: string, msg: string) =>
      this.processes
        .filter((p) => p.role === role)
        .flatMap((p) => p.logs)
        .filter((l) => l.msg === msg && Date.parse(String(l.time)) >= sinceMs);
    const claimedBelow = lines('worker', 'store_observed').filter(
      (l) => Number(l.frontier) < (before.frontiers[Number(l.partition)] ?? 0),
    );
    expect(claimedBelow.length, 'a claim below the lost frontier').toBeGreaterThan(0);
    const viewBelow = lines('view', 'view_active').filter((l) =>
      (l.frontiers as { partition: number; frontier: number }[]).some(
        (f) => f.frontier < (before.view[f.partition] ?? 0),
      ),
    );
    expect(viewBelow.length, 'the view resumed below its lost frontier').toBeGreaterThan(0);
  }

  expectAlive(): void {
    for (const p of this.processes) {
      expect(p.exit, `${p.role} exited:\n${p.stderr.slice(-3000)}`).toBeUndefined();
    }
  }

  /** `amendsctl verify` passes. */
  async expectVerified(): Promise<void> {
    const verified = await runAmendsctl(['verify', '--manifest', this.source.manifestPath, '--json'], {
      ...transportEnv,
      ...this.env,
    });
    expect(verified.code, `${verified.stdout.slice(0, 3000)}\n${verified.stderr}`).toBe(0);
    expect((JSON.parse(verified.stdout) as { verdict: string }).verdict).toBe('PASS');
  }

  async close(): Promise<void> {
    await this.probe.close();
  }
}

async function withPool<T>(url: string, use: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => {});
  try {
    return await use(pool);
  } finally {
    await pool.end();
  }
}
