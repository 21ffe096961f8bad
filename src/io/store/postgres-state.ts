/**
 * The production `State` (ports.ts, docs/design.md#store, #unknown-outcomes, #logs-and-exit): one
 * namespace's partitions, decisions, authority, output versions and outbox in PostgreSQL
 * (migrations/0002-worker-store.ts; since migration 0007 each version's row carries its outbox
 * envelope).
 *
 * Every write is ONE statement that is its own (implicit) transaction, so a commit costs one
 * round trip and no transaction is ever held open while the worker waits on anything else:
 * - claim: an upsert that increments the epoch under the partition row lock;
 * - process: a single statement whose first step locks the partition row (FOR UPDATE) and
 *   checks epoch and frontier; only if both match do the data-modifying steps insert the
 *   batch's decisions, authority, output versions with their envelopes, move the frontier with
 *   the last work, and NOTIFY the relay. A mismatch writes nothing; any error rolls all back.
 *
 * The batch is decided in memory *before* that statement, on the batch's window of each of its
 * keys (domain/key-window.ts): the stored authority of its transactions and the day rows from
 * the earliest day it touches on, read by one statement, in one snapshot together with the
 * partition row. Nothing is read by a claim, so a batch's cost and memory follow its
 * records, never the length of its keys' history. The window is valid exactly at the
 * (epoch, frontier) read with it: a stock key maps to one partition, and only that
 * partition's commits (each moving its frontier under its row lock) write the key, so the
 * commit's own check of epoch and frontier proves the window current. For the same reason
 * what the last acknowledged commit left of a key serves the partition's next batch without
 * a read (window-cache.ts, bounded; the commit checks the one thing it assumes).
 *
 * Failure classification (ports.ts StoreFailure), by how far the statement got
 * (store-connection.ts): never sent, or answered with an ERROR (lock_timeout,
 * statement_timeout, a constraint, serialization) → `failed_before_commit`; lost while the
 * committing statement was in flight (connection lost, FATAL, no reply, an abort) →
 * `unknown_outcome`. Reads (observe, the key load) can only fail before commit.
 *
 * The statements' texts are under sql/; the windows are shaped and decided in batch-windows.ts,
 * the commit's answer read in commit-verdict.ts, the warm-up run by warm-up.ts.
 */

import { setTimeout } from 'node:timers/promises';
import type { NamespaceConfig } from '../../domain/config.js';
import { type Screened, screenRecord } from '../../domain/decide.js';
import type { Outcome } from '../../domain/decision.js';
import { batchNeeds, type KeyNeeds } from '../../domain/key-window.js';
import { untilAborted } from '../../kernel/abortable.js';
import { assertInvariant } from '../../kernel/invariant.js';
import {
  type PartitionRow,
  type ProcessOutcome,
  type ProcessRequest,
  type SourceRecord,
  type State,
  StoreFailure,
} from '../../machines/ports.js';
import {
  afterCommit,
  cachedWindows,
  changedDays,
  decideOnWindows,
  type LoadedWindows,
  newCauses,
  windowsOf,
} from './batch-windows.js';
import { commitBatchValues, outcomeCounts } from './commit-batch-values.js';
import { commitVerdict } from './commit-verdict.js';
import { namespaceIdOf, namespaceIdSql } from './namespace-registry.js';
import type { Database } from './postgres.js';
import { type Prefetched, prefetchedWindows, prefetchOf } from './prefetched.js';
import { assertPartitionOf, assertProcessRequest } from './process-request-checks.js';
import { type CommitRow, commitBatchSql } from './sql/commit-batch.js';
import { type LoadWindowRow, loadWindowSql, loadWindowValues } from './sql/load-window.js';
import { type ClaimRow, claimSql, type ObservedRow, observeSql, partitionRowOf } from './sql/partition-row.js';
import { storeStatementNames } from './sql/statement-names.js';
import { StoreChain } from './store-chain.js';
import { StatementFailure, StoreConnection } from './store-connection.js';
import { type WarmUp, type WarmUpStore, warmUp, warmUpWaitMaxMs } from './warm-up.js';
import { WindowCache, type WindowCacheLimits, windowCacheLimits } from './window-cache.js';

export interface PostgresStateOptions {
  /** The session's application_name (pg_stat_activity shows who holds what). */
  applicationName?: string;
  /** Recorded as the partition's owner by each claim, for inspection. */
  workerId?: string;
  /** The longest a claim waits for the warm-up; default `warmUpWaitMaxMs`. */
  warmUpWaitMs?: number;
  /** The bounds of what the store keeps of its keys between batches (window-cache.ts). */
  cacheLimits?: WindowCacheLimits;
  /**
   * Called after each batch the database acknowledged, with its records by outcome (the
   * same counts stored as last_counts): the worker's metrics count them (worker-metrics.ts).
   */
  onCommitted?: (partition: number, outcomes: Readonly<Partial<Record<Outcome, number>>>) => void;
}

export class PostgresState implements State {
  private readonly connection: StoreConnection;
  private readonly namespace: string;
  private readonly owner: string | null;
  private readonly cache: WindowCache;
  /** The latest polled batch's early work (`prefetch`), until `process` takes it. */
  private prefetched: Prefetched | undefined;
  /** Partitions with a `process` under way: a window read of theirs now would be stale by its end. */
  private readonly processing = new Set<number>();
  /** Fires when the store closes: a prefetch's read and the warm-up end quietly. */
  private readonly shutdown = new AbortController();
  /** The warm-up under way (`warm`): a claim waits for it, at most `warmUpWaitMs`. */
  private warming: Promise<unknown> = Promise.resolve();
  private readonly warmUpWaitMs: number;
  /** Whether a claim has begun: a warm-up still running then stops (`warm`). */
  private claimed = false;
  /** Each partition's latest claim by this store: its epoch and claim (migration 0009), which its commits send. */
  private readonly claims = new Map<number, { epoch: number; claim: string }>();
  /** The namespace's id (namespace-registry.ts), read by the first statement that needs it. */
  private nsId: number | undefined;
  private readonly onCommitted: PostgresStateOptions['onCommitted'];
  /** The configuration revisions known: which configuration decides each record. */
  private readonly chain: StoreChain;

  /**
   * `config` is the namespace's registered configuration (namespace-registry.ts): the
   * namespace must be registered before the first claim.
   */
  constructor(
    db: Pick<Database, 'pool' | 'url'>,
    private readonly config: NamespaceConfig,
    options: PostgresStateOptions = {},
  ) {
    this.namespace = config.namespace;
    this.chain = new StoreChain(config);
    this.owner = options.workerId ?? null;
    this.onCommitted = options.onCommitted;
    this.warmUpWaitMs = options.warmUpWaitMs ?? warmUpWaitMaxMs;
    this.cache = new WindowCache(options.cacheLimits ?? windowCacheLimits);
    this.connection = new StoreConnection(
      db.url,
      options.applicationName ?? `amends store ${config.namespace} pid ${process.pid}`,
      db.pool,
    );
  }

  /** The server process of the store's session, when one is open. */
  get backendPid(): number | undefined {
    return this.connection.backendPid;
  }

  async close(): Promise<void> {
    this.shutdown.abort();
    await this.connection.close();
  }

  async claim(partition: number, signal: AbortSignal): Promise<PartitionRow> {
    assertPartitionOf(this.config.partitions, partition);
    // A claim fences the partition's last owner: be ready to decide its first batch at once.
    const waitMax = setTimeout(this.warmUpWaitMs, undefined, { ref: false });
    // On abort the claim statement below is not sent, and fails as every cancelled call does.
    await untilAborted(Promise.race([this.warming, waitMax]), signal, 'waiting for the warm-up').catch(() => {});
    this.claimed = true;
    const result = await this.run<ClaimRow>(
      { name: storeStatementNames.claim, text: claimSql, values: [this.namespace, partition, this.owner] },
      signal,
      'claim',
      true,
    );
    const row = partitionRowOf(result.rows[0], 'claim');
    assertInvariant(row.epoch >= 1, `claim returned epoch ${row.epoch}`);
    this.claims.set(partition, { epoch: row.epoch, claim: (result.rows[0] as ClaimRow).claim });
    // A claim is where a worker learns of a revision made while it was away.
    if ((result.rows[0] as ClaimRow).config_revision > this.chain.revision) await this.readChain(signal);
    return row;
  }

  /**
   * Readies the session and the code for the first batch (warm-up.ts). A claim waits for it
   * (at most `warmUpWaitMs`); one that stops waiting stops it, since from then on it would
   * only compete with the real work.
   */
  warm(signal: AbortSignal): Promise<WarmUp> {
    const store: WarmUpStore = {
      config: this.chain.latest,
      namespaceId: (s) => this.namespaceId(s),
      read: (query, s, doing) => this.run(query, s, doing, false),
      stopped: () => this.claimed || this.shutdown.signal.aborted,
    };
    // A store closed meanwhile (a worker that fails at start) ends its warm-up without a failure.
    const done = warmUp(store, signal).catch((error: unknown) => {
      if (this.shutdown.signal.aborted) return { rounds: 0, sent: false };
      throw error;
    });
    this.warming = done.catch(() => {});
    return done;
  }

  async observe(partition: number, signal: AbortSignal): Promise<PartitionRow> {
    assertPartitionOf(this.config.partitions, partition);
    const result = await this.run<ObservedRow>(
      { name: storeStatementNames.observe, text: observeSql, values: [this.namespace, partition] },
      signal,
      'observe',
      false,
    );
    const found = result.rows[0];
    // No row: never claimed, nothing decided.
    if (found === undefined) return { epoch: 0, frontier: 0 };
    const row = partitionRowOf(found, 'observe');
    const held = this.claims.get(partition);
    // Our epoch under another claim: a database that went back in time handed it out again.
    return held?.epoch === row.epoch && found.claim !== held.claim ? { ...row, elsewhere: true } : row;
  }

  /**
   * Begins a polled batch's work while the group runs its post-poll source observation
   * (docs/design.md#source-validation lets that observation run alongside the store's work, as long as it passes
   * before the COMMIT is sent): screening, and on a partition the cache knows nothing of (the
   * first batch after a claim) the window read. Only reads; `process` of the same records
   * uses it when the partition row it read still has the request's epoch and frontier, and
   * reads again otherwise. Not part of the `State` seam: a hint from the consumer's side.
   */
  prefetch(records: readonly SourceRecord[]): void {
    const first = records[0];
    if (first === undefined || this.shutdown.signal.aborted) return;
    if (records.some((r) => r.partition !== first.partition)) return;
    const screened = this.screen(records);
    const needs = batchNeeds(screened);
    let loaded: Promise<LoadedWindows | undefined> | undefined;
    // The group polls while a batch commits: a read before that commit lands is never current.
    if (needs.size > 0 && !this.cache.knows(first.partition) && !this.processing.has(first.partition)) {
      // A failed read is no failure of the batch: `process` reads again and reports its own.
      loaded = this.loadWindows(first.partition, new Map(needs), this.shutdown.signal).catch(() => undefined);
    }
    this.prefetched = { records, revision: this.chain.revision, screened, needs, loaded };
  }

  async process(request: ProcessRequest, signal: AbortSignal): Promise<ProcessOutcome> {
    assertProcessRequest(this.config.partitions, request);
    const { partition, epoch, expectedFrontier, records } = request;
    const early = prefetchOf(this.prefetched, records, this.chain.revision);
    this.prefetched = undefined;
    let screened = early?.screened ?? this.screen(records);
    let needs = early?.needs ?? batchNeeds(screened);
    const cached = this.cache.holds(partition, epoch, expectedFrontier);
    this.processing.add(partition);
    try {
      const read = cached ? undefined : await prefetchedWindows(early, request, signal);
      let outcome = await this.attempt(request, screened, needs, cached, signal, read);
      let reread = !cached;
      while (outcome === 'stale' || outcome === 'revised') {
        // A transaction the cache took as new is stored (an old one's correction), or the namespace
        // has a newer revision than the batch was decided under: read (the chain too), decide again.
        assertInvariant(outcome === 'revised' || !reread, 'a batch decided on its read windows was refused as stale');
        this.cache.drop(partition);
        if (outcome === 'revised') {
          const known = this.chain.revision;
          await this.readChain(signal);
          // Revisions only grow: fewer means the database went back in time past a config-revise.
          if (this.chain.revision < known) return { kind: 'revision_lost', held: this.chain.revision, known };
          screened = this.screen(records);
          needs = batchNeeds(screened);
        }
        reread = true;
        outcome = await this.attempt(request, screened, needs, false, signal);
      }
      if (outcome.kind !== 'acknowledged') this.cache.drop(partition);
      return outcome;
    } catch (error) {
      this.cache.drop(partition);
      throw error;
    } finally {
      this.processing.delete(partition);
    }
  }

  /**
   * Decides the batch on its keys' windows (from the cache where it holds them, else read,
   * or as `read` early by `prefetch`) and commits it; 'stale' when the commit found a
   * transaction the cache took as new.
   */
  private async attempt(
    request: ProcessRequest,
    screened: readonly Screened[],
    needs: ReadonlyMap<string, KeyNeeds>,
    useCache: boolean,
    signal: AbortSignal,
    read?: LoadedWindows,
  ): Promise<ProcessOutcome | 'stale' | 'revised'> {
    const { partition, epoch, expectedFrontier, records } = request;
    const { keys, toRead, assumedNew } = cachedWindows(this.cache, partition, needs, useCache);
    // Keys the cache cannot give are read; a batch that needs no key state reads nothing.
    if (toRead.size > 0) {
      const loaded = read ?? (await this.loadWindows(partition, toRead, signal));
      // Epochs and frontiers only grow, so an answer read without the row lock stays true (on
      // this timeline: a lower one says the database went back in time, partition-ends.ts).
      // The epoch under another claim is another owner's, whatever the frontier says.
      if (loaded.row.epoch !== epoch || loaded.claim !== this.claimOf(partition, epoch))
        return { kind: 'fenced', epoch: loaded.row.epoch };
      if (loaded.row.frontier !== expectedFrontier)
        return { kind: 'unexpected_frontier', frontier: loaded.row.frontier };
      for (const [id, w] of loaded.keys) keys.set(id, w);
    }
    const results = decideOnWindows(records, screened, keys);
    const frontier = (records[records.length - 1] as SourceRecord).offset + 1;
    const causes = newCauses(results);
    const nsId = await this.namespaceId(signal);
    const revision = this.chain.revision;
    const result = await this.run<CommitRow>(
      {
        name: storeStatementNames.commitBatch,
        text: commitBatchSql,
        values: commitBatchValues({
          namespace: this.namespace,
          nsId,
          request,
          results,
          frontier,
          days: changedDays(keys, causes),
          assumedNew,
          revision,
          claim: this.claimOf(partition, epoch),
        }),
      },
      signal,
      'process',
      true,
    );
    const outcome = commitVerdict(request, result.rows[0], { assumedNew: assumedNew.length, frontier, revision });
    if (typeof outcome === 'object' && outcome.kind === 'acknowledged') {
      this.cache.committed(partition, epoch, frontier, afterCommit(partition, keys, causes));
      this.onCommitted?.(partition, outcomeCounts(results));
    }
    return outcome;
  }

  /** Reads the partition row and each key's window, in one snapshot; checks the window's start. */
  private async loadWindows(
    partition: number,
    needs: Map<string, KeyNeeds>,
    signal: AbortSignal,
  ): Promise<LoadedWindows> {
    const result = await this.run<LoadWindowRow>(
      {
        name: storeStatementNames.loadWindow,
        text: loadWindowSql,
        values: loadWindowValues(this.namespace, await this.namespaceId(signal), partition, needs),
      },
      signal,
      'loading the batch window',
      false,
    );
    const found = result.rows[0];
    assertInvariant(found !== undefined, 'loading the batch window returned no row');
    const row = found.epoch === null ? { epoch: 0, frontier: 0 } : partitionRowOf(found, 'load');
    return { row, claim: found.claim, keys: windowsOf(needs, found) };
  }

  /** The claim of this store's claim of `partition` at `epoch`; null when it holds none (nothing commits). */
  private claimOf(partition: number, epoch: number): string | null {
    const held = this.claims.get(partition);
    return held?.epoch === epoch ? held.claim : null;
  }

  /** Each record screened under the configuration revision in force at its offset. */
  private screen(records: readonly SourceRecord[]): Screened[] {
    return records.map((record) => screenRecord(record, this.chain.configAt(record.partition, record.offset)));
  }

  /** Reads the namespace's configuration revisions again. */
  private readChain(signal: AbortSignal): Promise<void> {
    return this.chain.read((query, s) => this.run(query, s, 'reading the configuration revisions', false), signal);
  }

  /** The namespace's id, read once per store (namespace-registry.ts `namespaceId`). */
  private async namespaceId(signal: AbortSignal): Promise<number> {
    if (this.nsId === undefined) {
      const result = await this.run<{ id: unknown }>(
        { name: storeStatementNames.namespaceId, text: namespaceIdSql, values: [this.namespace] },
        signal,
        'reading the namespace id',
        false,
      );
      this.nsId = namespaceIdOf(result.rows, this.namespace);
    }
    return this.nsId;
  }

  /** Runs one statement; `commits`: whether it carries a COMMIT (then a lost reply is unknown). */
  private async run<R extends object>(
    query: { name: string; text: string; values: unknown[] },
    signal: AbortSignal,
    doing: string,
    commits: boolean,
  ): Promise<{ rows: R[] }> {
    try {
      return await this.connection.run<R & Record<string, unknown>>(query, signal);
    } catch (error) {
      if (!(error instanceof StatementFailure)) throw error;
      const code = commits && error.kind === 'lost' ? 'unknown_outcome' : 'failed_before_commit';
      throw new StoreFailure(code, `${doing} (namespace ${this.namespace}): ${error.message}`, { cause: error });
    }
  }
}
