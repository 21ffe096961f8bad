/**
 * The production `State` (ports.ts, worker.md §5–§7): one namespace's partitions, decisions,
 * authority, output versions and outbox in PostgreSQL (migrations/0002-worker-store.ts; since
 * migration 0007 each version's row carries its outbox envelope).
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
 */

import { setTimeout } from 'node:timers/promises';
import { compareCodePoints } from '../../domain/canonical-json.js';
import { type NamespaceConfig, type StockKeyConfig, stockKeyId } from '../../domain/config.js';
import { type DecideResult, decideWithKeyState, type Screened, screenRecord } from '../../domain/decide.js';
import type { Outcome } from '../../domain/decision.js';
import {
  batchNeeds,
  type DayRow,
  dayRowChanges,
  dayRows,
  earliestTouchedDay,
  type KeyNeeds,
  windowState,
} from '../../domain/key-window.js';
import type { AuthorityEntry, DayOutput, KeyState } from '../../domain/ledger-state.js';
import { untilAborted } from '../../kernel/abortable.js';
import { assertInvariant } from '../../kernel/invariant.js';
import { int8ToSafeInteger, nullableInt8ToSafeInteger } from '../../kernel/safe-integer.js';
import {
  type PartitionRow,
  type ProcessOutcome,
  type ProcessRequest,
  type SourceRecord,
  type State,
  StoreFailure,
} from '../../machines/ports.js';
import { type ChangedDay, commitBatchValues, outcomeCounts, type TxnRef } from './commit-batch-values.js';
import { namespaceIdOf, namespaceIdSql } from './namespace-registry.js';
import type { Database } from './postgres.js';
import { type CommitRow, commitBatchSql } from './sql/commit-batch.js';
import { type LoadWindowRow, loadWindowSql, loadWindowValues } from './sql/load-window.js';
import { claimSql, type EpochFrontierRow, observeSql, partitionRowOf } from './sql/partition-row.js';
import { storeStatementNames } from './sql/statement-names.js';
import { StatementFailure, StoreConnection } from './store-connection.js';
import { warmUpBatch, warmUpRecordsMax, warmUpRounds } from './warm-up-batch.js';
import { type KeyAfterCommit, WindowCache, type WindowCacheLimits, windowCacheLimits } from './window-cache.js';

/** At most this many records per `process` call: the batch is one statement's arrays. */
export const batchRecordsMax = 10_000;

/** What the warm-up got done before a claim stopped it: rounds in memory, and whether it sent its statements. */
export interface WarmUp {
  rounds: number;
  sent: boolean;
}

/**
 * The longest a claim waits for the warm-up (`warm`). A restarted member gets its partitions
 * back about 100 ms after the store's session opens (static membership), before the warm-up
 * is done; a claim that went first fenced the old owner and then decided its first batch on
 * cold code.
 */
export const warmUpWaitMaxMs = 3_000;

/** A partition no claim can create: the warm-up's statements find no row, so they write nothing. */
const noPartition = -1;

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

/** A key's window as read, and the state the batch is decided on. */
interface KeyWindow {
  stockKey: StockKeyConfig;
  /** Every stored day from here on is in `before`; undefined: none is (the batch touches none). */
  start: string | undefined;
  /** The day rows it was made of, and where each day's latest version came from (read only). */
  before: readonly DayRow[];
  causes: ReadonlyMap<string, number>;
  state: KeyState;
}

interface LoadedWindows {
  row: PartitionRow;
  keys: Map<string, KeyWindow>;
}

/** A polled batch's work begun early (`prefetch`): its screening, and its windows when read. */
interface Prefetched {
  records: readonly SourceRecord[];
  screened: Screened[];
  needs: Map<string, KeyNeeds>;
  loaded: Promise<LoadedWindows | undefined> | undefined;
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
  /** The namespace's id (namespace-registry.ts), read by the first statement that needs it. */
  private nsId: number | undefined;
  private readonly onCommitted: PostgresStateOptions['onCommitted'];

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
    this.assertPartition(partition);
    // A claim fences the partition's last owner: be ready to decide its first batch at once.
    const waitMax = setTimeout(this.warmUpWaitMs, undefined, { ref: false });
    // On abort the claim statement below is not sent, and fails as every cancelled call does.
    await untilAborted(Promise.race([this.warming, waitMax]), signal, 'waiting for the warm-up').catch(() => {});
    this.claimed = true;
    const result = await this.run<EpochFrontierRow>(
      { name: storeStatementNames.claim, text: claimSql, values: [this.namespace, partition, this.owner] },
      signal,
      'claim',
      true,
    );
    const row = partitionRowOf(result.rows[0], 'claim');
    assertInvariant(row.epoch >= 1, `claim returned epoch ${row.epoch}`);
    return row;
  }

  /**
   * Readies the session and the code for the first batch: the batch statements, run on a
   * partition that cannot exist, read and write nothing, but parse them and load what they
   * touch (tables, indexes, functions) into this session's caches; the commit carries a
   * synthetic batch decided on an empty window (warm-up-batch.ts), so decoding, the engine and
   * the parameters run (`warmUpRounds` times, in memory) before a real batch needs them. A
   * claim waits for it (at most `warmUpWaitMs`); one that stops waiting stops it, since from
   * then on it would only compete with the real work.
   */
  warm(signal: AbortSignal): Promise<WarmUp> {
    // A store closed meanwhile (a worker that fails at start) ends its warm-up without a failure.
    const done = this.warmUp(signal).catch((error: unknown) => {
      if (this.shutdown.signal.aborted) return { rounds: 0, sent: false };
      throw error;
    });
    this.warming = done.catch(() => {});
    return done;
  }

  private async warmUp(signal: AbortSignal): Promise<WarmUp> {
    const nsId = await this.namespaceId(signal);
    const window = loadWindowValues(this.namespace, nsId, noPartition, new Map());
    await this.run(
      { name: storeStatementNames.warmWindow, text: loadWindowSql, values: window },
      signal,
      'warm',
      false,
    );
    const records = warmUpBatch(this.config, warmUpRecordsMax);
    let commit: unknown[] = [];
    let rounds = 0;
    // Once a claim has begun, warming would only delay the real work: it stops.
    for (; rounds < warmUpRounds && !this.claimed && !this.shutdown.signal.aborted; rounds++) {
      commit = this.warmUpCommitValues(records, nsId);
      // Between rounds the consumer's and the observer's callbacks get their turn.
      await new Promise((resolve) => setImmediate(resolve));
      signal.throwIfAborted();
    }
    if (this.claimed || this.shutdown.signal.aborted) return { rounds, sent: false };
    const result = await this.run<CommitRow>(
      { name: storeStatementNames.warmCommit, text: commitBatchSql, values: commit },
      signal,
      'warm',
      false,
    );
    assertInvariant(result.rows[0]?.committed === 0, 'the warm-up batch was committed');
    return { rounds, sent: true };
  }

  /**
   * The commit's parameters of the warm-up batch: its first half decided on empty windows, its
   * second on the windows the first half left, handed over as the load statement returns them
   * (`warmUpWindowRow`), so that reading a window and deciding on history run too.
   */
  private warmUpCommitValues(records: SourceRecord[], nsId: number): unknown[] {
    const half = Math.floor(records.length / 2);
    const [older, newer] = [records.slice(0, half), records.slice(half)];
    const screenedOlder = older.map((record) => screenRecord(record, this.config));
    const olderKeys = windowsWithoutHistory(batchNeeds(screenedOlder));
    const olderCauses = newCauses(decideOnWindows(older, screenedOlder, olderKeys));
    const screened = newer.map((record) => screenRecord(record, this.config));
    const needs = batchNeeds(screened);
    const keys = windowsOf(needs, warmUpWindowRow(needs, afterCommit(noPartition, olderKeys, olderCauses)));
    const results = decideOnWindows(newer, screened, keys);
    const batch = { partition: noPartition, records: newer, epoch: 1, expectedFrontier: half };
    const days = changedDays(keys, newCauses(results));
    return commitBatchValues({
      namespace: this.namespace,
      nsId,
      request: batch,
      results,
      frontier: records.length,
      days,
      assumedNew: [],
    });
  }

  async observe(partition: number, signal: AbortSignal): Promise<PartitionRow> {
    this.assertPartition(partition);
    const result = await this.run<EpochFrontierRow>(
      { name: storeStatementNames.observe, text: observeSql, values: [this.namespace, partition] },
      signal,
      'observe',
      false,
    );
    const found = result.rows[0];
    // No row: never claimed, nothing decided.
    return found === undefined ? { epoch: 0, frontier: 0 } : partitionRowOf(found, 'observe');
  }

  /**
   * Begins a polled batch's work while the group runs its post-poll source observation
   * (worker.md §2 lets that observation run alongside the store's work, as long as it passes
   * before the COMMIT is sent): screening, and on a partition the cache knows nothing of (the
   * first batch after a claim) the window read. Only reads; `process` of the same records
   * uses it when the partition row it read still has the request's epoch and frontier, and
   * reads again otherwise. Not part of the `State` seam: a hint from the consumer's side.
   */
  prefetch(records: readonly SourceRecord[]): void {
    const first = records[0];
    if (first === undefined || this.shutdown.signal.aborted) return;
    if (records.some((r) => r.partition !== first.partition)) return;
    const screened = records.map((record) => screenRecord(record, this.config));
    const needs = batchNeeds(screened);
    let loaded: Promise<LoadedWindows | undefined> | undefined;
    // The group polls while a batch commits: a read before that commit lands is never current.
    if (needs.size > 0 && !this.cache.knows(first.partition) && !this.processing.has(first.partition)) {
      // A failed read is no failure of the batch: `process` reads again and reports its own.
      loaded = this.loadWindows(first.partition, new Map(needs), this.shutdown.signal).catch(() => undefined);
    }
    this.prefetched = { records, screened, needs, loaded };
  }

  async process(request: ProcessRequest, signal: AbortSignal): Promise<ProcessOutcome> {
    this.assertRequest(request);
    const { partition, epoch, expectedFrontier, records } = request;
    const early = this.takePrefetch(records);
    const screened = early?.screened ?? records.map((record) => screenRecord(record, this.config));
    const needs = early?.needs ?? batchNeeds(screened);
    const cached = this.cache.holds(partition, epoch, expectedFrontier);
    this.processing.add(partition);
    try {
      const read = cached ? undefined : await this.prefetchedWindows(early, request, signal);
      let outcome = await this.attempt(request, screened, needs, cached, signal, read);
      if (outcome === 'stale') {
        // A transaction the cache took as new is stored (an old one's correction): read, decide again.
        this.cache.drop(partition);
        outcome = await this.attempt(request, screened, needs, false, signal);
        assertInvariant(outcome !== 'stale', 'a batch decided on its read windows was refused as stale');
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

  /** The prefetch of exactly these records (same partition and offsets), taken once. */
  private takePrefetch(records: readonly SourceRecord[]): Prefetched | undefined {
    const early = this.prefetched;
    this.prefetched = undefined;
    if (early === undefined || early.records.length !== records.length) return undefined;
    const same = early.records.every(
      (r, i) => r.partition === records[i]?.partition && r.offset === records[i]?.offset,
    );
    return same ? early : undefined;
  }

  /** The prefetched windows, when they were read at the request's epoch and frontier. */
  private async prefetchedWindows(
    early: Prefetched | undefined,
    request: ProcessRequest,
    signal: AbortSignal,
  ): Promise<LoadedWindows | undefined> {
    if (early?.loaded === undefined) return undefined;
    // Cancelled: no window, and the batch's own statement fails as every cancelled call does.
    const loaded = await untilAborted(early.loaded, signal, 'reading the batch window').catch(() => undefined);
    const current = loaded?.row.epoch === request.epoch && loaded.row.frontier === request.expectedFrontier;
    return current ? loaded : undefined;
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
  ): Promise<ProcessOutcome | 'stale'> {
    const { partition, epoch, expectedFrontier, records } = request;
    const { keys, toRead, assumedNew } = this.cachedWindows(partition, needs, useCache);
    // Keys the cache cannot give are read; a batch that needs no key state reads nothing.
    if (toRead.size > 0) {
      const loaded = read ?? (await this.loadWindows(partition, toRead, signal));
      // Epochs and frontiers only grow, so an answer read without the row lock stays true.
      if (loaded.row.epoch !== epoch) return { kind: 'fenced', epoch: loaded.row.epoch };
      if (loaded.row.frontier !== expectedFrontier)
        return { kind: 'unexpected_frontier', frontier: loaded.row.frontier };
      for (const [id, w] of loaded.keys) keys.set(id, w);
    }
    const results = decideOnWindows(records, screened, keys);
    const frontier = (records[records.length - 1] as SourceRecord).offset + 1;
    const causes = newCauses(results);
    const nsId = await this.namespaceId(signal);
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
        }),
      },
      signal,
      'process',
      true,
    );
    const outcome = commitVerdict(request, result.rows[0], assumedNew.length, frontier);
    if (outcome !== 'stale' && outcome.kind === 'acknowledged') {
      this.cache.committed(partition, epoch, frontier, afterCommit(partition, keys, causes));
      this.onCommitted?.(partition, outcomeCounts(results));
    }
    return outcome;
  }

  /** The windows the cache gives (with the transactions they take as new), and the keys it cannot give. */
  private cachedWindows(
    partition: number,
    needs: ReadonlyMap<string, KeyNeeds>,
    useCache: boolean,
  ): { keys: Map<string, KeyWindow>; toRead: Map<string, KeyNeeds>; assumedNew: TxnRef[] } {
    const keys = new Map<string, KeyWindow>();
    const toRead = new Map<string, KeyNeeds>();
    const assumedNew: TxnRef[] = [];
    for (const [id, need] of needs) {
      const w = useCache ? this.cache.window(partition, id, need) : undefined;
      if (w === undefined) {
        toRead.set(id, need);
        continue;
      }
      const { stockKey } = need;
      const state = windowState(w.authority, w.days);
      keys.set(id, { stockKey, start: w.start, before: w.days, causes: w.causes, state });
      for (const txn of w.assumedNew) assumedNew.push({ item: stockKey.item, location: stockKey.location, txn });
    }
    return { keys, toRead, assumedNew };
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
    return { row, keys: windowsOf(needs, found) };
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

  private assertPartition(partition: number): void {
    assertInvariant(
      Number.isSafeInteger(partition) && partition >= 0 && partition < this.config.partitions,
      `partition ${partition} is not in [0, ${this.config.partitions})`,
    );
  }

  /** The batch as worker.md §4.3 promises it: one partition, offsets ascending from the frontier. */
  private assertRequest(request: ProcessRequest): void {
    const { partition, records, epoch, expectedFrontier } = request;
    this.assertPartition(partition);
    assertInvariant(Number.isSafeInteger(epoch) && epoch >= 1, `epoch ${epoch}`);
    assertInvariant(Number.isSafeInteger(expectedFrontier) && expectedFrontier >= 0, `frontier ${expectedFrontier}`);
    assertInvariant(
      records.length >= 1 && records.length <= batchRecordsMax,
      `a batch of ${records.length} records (1 to ${batchRecordsMax})`,
    );
    let previous = expectedFrontier - 1;
    for (const r of records) {
      assertInvariant(r.partition === partition, `a record of partition ${r.partition} in a batch of ${partition}`);
      assertInvariant(
        Number.isSafeInteger(r.offset) && r.offset > previous,
        `offset ${r.offset} after ${previous} (frontier ${expectedFrontier})`,
      );
      previous = r.offset;
    }
  }
}

/** Key → day → the offset of the record that made the day's newest version in this batch. */
type NewCauses = ReadonlyMap<string, ReadonlyMap<string, number>>;

function newCauses(results: readonly DecideResult[]): NewCauses {
  const causes = new Map<string, Map<string, number>>();
  for (const r of results) {
    for (const v of r.newVersions) {
      const id = stockKeyId(v.item, v.location);
      let days = causes.get(id);
      if (days === undefined) {
        days = new Map();
        causes.set(id, days);
      }
      days.set(v.day, v.cause.offset);
    }
  }
  return causes;
}

/** Each window as the acknowledged batch left it, with the causes of its days' latest versions. */
function afterCommit(
  partition: number,
  keys: ReadonlyMap<string, KeyWindow>,
  causes: NewCauses,
): Map<string, KeyAfterCommit> {
  const after = new Map<string, KeyAfterCommit>();
  for (const [id, w] of keys) {
    // Only the batch's new versions change causes: a key's whole window is not walked (nor copied) for them.
    const fresh = causes.get(id);
    let dayCauses: ReadonlyMap<string, number> = w.causes;
    if (fresh !== undefined) {
      const merged = new Map(w.causes);
      for (const [day, cause] of fresh) if (w.state.outputs.has(day)) merged.set(day, cause);
      dayCauses = merged;
    }
    after.set(id, { partition, start: w.start, state: w.state, causes: dayCauses });
  }
  return after;
}

/**
 * Every day row the decided batch changed (key-window.ts `dayRowChanges`), with the offset
 * that caused its latest version: this batch's record for a new version, else the stored one.
 */
function changedDays(keys: ReadonlyMap<string, KeyWindow>, newCauses: NewCauses): ChangedDay[] {
  const changed: ChangedDay[] = [];
  for (const [id, w] of keys) {
    const fresh = newCauses.get(id);
    for (const row of dayRowChanges(w.before, w.state)) {
      const cause = fresh?.get(row.day) ?? w.causes.get(row.day);
      assertInvariant(cause !== undefined, `day ${row.day} of ${id} changed without a cause`);
      changed.push({ item: w.stockKey.item, location: w.stockKey.location, row, cause });
    }
  }
  return changed;
}

/**
 * The windows from the statement's rows, one per key of the batch. The window must start at
 * or before the earliest day the engine's own rule finds (key-window.ts): a later start would
 * decide on a partial history. Checked here, where the data crosses into the engine.
 */
function windowsOf(needs: ReadonlyMap<string, KeyNeeds>, found: LoadWindowRow): Map<string, KeyWindow> {
  const rows = new Map<string, { authority: Map<string, AuthorityEntry>; days: DayRow[]; causes: Map<string, number> }>(
    [...needs.keys()].map((id) => [id, { authority: new Map(), days: [], causes: new Map() }]),
  );
  const rowsOf = (item: unknown, location: unknown) => rows.get(stockKeyId(String(item), String(location)));
  for (const [item, location, txn, rev, op, day, qty] of found.authority) {
    rowsOf(item, location)?.authority.set(String(txn), authorityEntryOf(rev, op, day, qty));
  }
  for (const [item, location, day, version, closing, status, retracted, qty, posts, cause] of found.days) {
    const key = rowsOf(item, location);
    const total = { qty: int8ToSafeInteger(qty, 'day qty'), posts: int8ToSafeInteger(posts, 'day posts') };
    key?.days.push({ day: String(day), total, output: dayOutputOf(version, closing, status, retracted) });
    key?.causes.set(String(day), int8ToSafeInteger(cause, 'day cause'));
  }
  const starts = new Map(
    found.earliest.map(([item, location, day]) => [stockKeyId(String(item), String(location)), String(day)]),
  );
  const windows = new Map<string, KeyWindow>();
  for (const [id, need] of needs) {
    const { authority, days, causes } = rows.get(id) as NonNullable<ReturnType<typeof rowsOf>>;
    const wanted = earliestTouchedDay(need, authority);
    const start = starts.get(id);
    assertInvariant(
      wanted === undefined || (start !== undefined && start <= wanted),
      `the window of ${id} starts at ${start}, after the earliest touched day ${wanted}`,
    );
    windows.set(id, { stockKey: need.stockKey, start, before: days, causes, state: windowState(authority, days) });
  }
  return windows;
}

/**
 * What the load statement would return for `needs` over the keys as `stored` (the warm-up's
 * first half): the stored authority of the batch's transactions, each key's earliest touched
 * day and its days from there on (no carried day: the warm-up's keys start at the origin).
 */
function warmUpWindowRow(
  needs: ReadonlyMap<string, KeyNeeds>,
  stored: ReadonlyMap<string, KeyAfterCommit>,
): LoadWindowRow {
  const found: LoadWindowRow = { epoch: null, frontier: null, authority: [], earliest: [], days: [] };
  for (const [id, need] of needs) {
    const key = stored.get(id);
    if (key === undefined) continue;
    const { item, location } = need.stockKey;
    const authority = new Map<string, AuthorityEntry>();
    for (const { txn } of need.revisions) {
      const entry = key.state.authority.get(txn);
      if (entry !== undefined) authority.set(txn, entry);
    }
    for (const [txn, e] of authority) found.authority.push([item, location, txn, e.rev, e.op, e.day, e.qty]);
    const start = earliestTouchedDay(need, authority);
    if (start === undefined) continue;
    found.earliest.push([item, location, start]);
    for (const { day, total, output } of dayRows(key.state)) {
      if (compareCodePoints(day, start) < 0) continue;
      const { version, closing, status, retracted } = output;
      found.days.push([
        item,
        location,
        day,
        version,
        closing,
        status,
        retracted,
        total.qty,
        total.posts,
        key.causes.get(day),
      ]);
    }
  }
  return found;
}

/** The windows the read would give keys without any history: no rows, each from its earliest day. */
function windowsWithoutHistory(needs: ReadonlyMap<string, KeyNeeds>): Map<string, KeyWindow> {
  const earliest = [...needs.values()].map((n) => [
    n.stockKey.item,
    n.stockKey.location,
    earliestTouchedDay(n, new Map()),
  ]);
  return windowsOf(needs, { epoch: null, frontier: null, authority: [], earliest, days: [] });
}

/** The engine's results for the batch on its windows; a refusal (e.g. a closing beyond 2^53) sends nothing. */
function decideOnWindows(
  records: readonly SourceRecord[],
  screened: readonly Screened[],
  keys: ReadonlyMap<string, KeyWindow>,
): DecideResult[] {
  try {
    return screened.map((s, i) => {
      if (s.kind === 'decided') return s.result;
      const window = keys.get(stockKeyId(s.stockKey.item, s.stockKey.location));
      assertInvariant(window !== undefined, `no window loaded for ${s.stockKey.item}@${s.stockKey.location}`);
      return decideWithKeyState(records[i] as SourceRecord, s.envelope, s.stockKey, window.state);
    });
  } catch (error) {
    throw new StoreFailure('failed_before_commit', `deciding the batch failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * What the batch statement's answer means: committed only when the locked partition row had
 * the request's epoch and frontier and no transaction taken as new was stored ('stale').
 */
function commitVerdict(
  request: ProcessRequest,
  row: CommitRow | undefined,
  assumedNew: number,
  frontier: number,
): ProcessOutcome | 'stale' {
  const { epoch, expectedFrontier } = request;
  assertInvariant(row !== undefined, 'the batch commit returned no row');
  if (row.epoch === null) {
    assertInvariant(row.committed === 0, 'a batch committed without a partition row');
    return { kind: 'fenced', epoch: 0 };
  }
  const durable = partitionRowOf(row, 'process');
  const matched = durable.epoch === epoch && durable.frontier === expectedFrontier;
  assertInvariant(row.stale === 0 || assumedNew > 0, `${row.stale} stale transactions, none assumed new`);
  assertInvariant(
    (matched && row.stale === 0) === (row.committed === 1),
    `commit ${row.committed} disagrees with the partition row`,
  );
  if (durable.epoch !== epoch) return { kind: 'fenced', epoch: durable.epoch };
  if (durable.frontier !== expectedFrontier) return { kind: 'unexpected_frontier', frontier: durable.frontier };
  if (row.stale > 0) return 'stale';
  return { kind: 'acknowledged', frontier };
}

function authorityEntryOf(rev: unknown, op: unknown, day: unknown, qty: unknown): AuthorityEntry {
  assertInvariant(op === 'post' || op === 'cancel', `authority op ${String(op)}`);
  assertInvariant(day === null || typeof day === 'string', `authority day ${String(day)}`);
  return {
    rev: int8ToSafeInteger(rev, 'authority rev'),
    op,
    day,
    qty: nullableInt8ToSafeInteger(qty, 'authority qty'),
  };
}

function dayOutputOf(version: unknown, closing: unknown, status: unknown, retracted: unknown): DayOutput {
  assertInvariant(status === null || status === 'NEGATIVE' || status === 'LOW' || status === 'OK', 'output status');
  assertInvariant(typeof retracted === 'boolean', 'output retracted');
  return {
    version: int8ToSafeInteger(version, 'output version'),
    closing: nullableInt8ToSafeInteger(closing, 'output closing'),
    status,
    retracted,
  };
}
