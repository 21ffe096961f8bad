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
import { StatementFailure, StoreConnection } from './store-connection.js';
import { warmUpBatch, warmUpRecordsMax, warmUpRounds } from './warm-up-batch.js';
import { type KeyAfterCommit, WindowCache, type WindowCacheLimits, windowCacheLimits } from './window-cache.js';

/** The NOTIFY channel a commit with new outbox envelopes signals; the payload is the namespace. */
export const outboxChannel = 'amends_outbox';

/** At most this many records per `process` call: the batch is one statement's arrays. */
export const batchRecordsMax = 10_000;

/** Prepared statement names (one parse per session); tests' fault proxies match on them. */
export const storeStatementNames = {
  claim: 'amends_claim',
  observe: 'amends_observe',
  loadWindow: 'amends_load_window',
  commitBatch: 'amends_commit_batch',
  namespaceId: 'amends_namespace_id',
  warmWindow: 'amends_warm_window',
  warmCommit: 'amends_warm_commit',
} as const;

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

const claimSql = `
  INSERT INTO partitions AS p (namespace, partition, epoch, owner) VALUES ($1, $2, 1, $3)
  ON CONFLICT (namespace, partition)
  DO UPDATE SET epoch = p.epoch + 1, owner = EXCLUDED.owner, claimed_at = now()
  RETURNING epoch, frontier`;

const observeSql = 'SELECT epoch, frontier FROM partitions WHERE namespace = $1 AND partition = $2';

/**
 * The partition row and each key's window (key-window.ts) in one snapshot (one statement).
 * $3–$7: the batch's revisions (item, location, txn, rev, post day or NULL), $8 the namespace's
 * id (the per-record tables' key, migration 0006; partitions keep the text). `touched` is
 * `earliestTouchedDay`: a revision newer than the stored one touches its own post day and
 * the day its transaction's stored post holds (LEAST skips NULLs). Every read is an index
 * step: authority by its key, day rows by a range of (ns, item, location, day), the
 * carried day by `output_days_shown`. The day range and the authority lookup are LATERAL
 * subqueries (with ORDER BY, LIMIT), which PostgreSQL does not flatten into joins, so they
 * are always probed per key and per transaction: as joins, a namespace the statistics do not
 * know yet (a new one, or a rebuild, until autovacuum analyzes) looked like one row, and the
 * planner scanned all of its days, or all of its authority into a hash join.
 */
export const loadWindowSql = `
  WITH r AS (
    SELECT u.item, u.location, u.txn, u.rev, u.day COLLATE "C" AS day
      FROM unnest($3::text[], $4::text[], $5::text[], $6::int[], $7::text[]) AS u(item, location, txn, rev, day)
  ), t AS (
    SELECT DISTINCT item, location, txn FROM r
  ), a AS (
    SELECT t.item, t.location, t.txn, h.rev, h.op, h.day, h.qty
      FROM t CROSS JOIN LATERAL (
        SELECT a.rev, a.op, a.day, a.qty FROM authority a
         WHERE a.ns = $8::int AND a.item = t.item COLLATE "C" AND a.location = t.location COLLATE "C"
           AND a.txn = t.txn COLLATE "C"
         LIMIT 1) AS h
  ), touched AS (
    SELECT r.item, r.location, least(r.day, a.day) AS day
      FROM r LEFT JOIN a ON a.item = r.item COLLATE "C" AND a.location = r.location COLLATE "C"
                        AND a.txn = r.txn COLLATE "C"
     WHERE a.rev IS NULL OR r.rev > a.rev
  ), e AS (
    SELECT item, location, min(day) AS day FROM touched WHERE day IS NOT NULL GROUP BY item, location
  ), w AS (
    SELECT f.* FROM e CROSS JOIN LATERAL (
      SELECT o.item, o.location, o.day, o.version, o.closing, o.status, o.retracted, o.qty, o.posts, o.cause_offset
        FROM output_days o
       WHERE o.ns = $8::int AND o.item = e.item COLLATE "C" AND o.location = e.location COLLATE "C"
         AND o.day >= e.day
       ORDER BY o.day) AS f
    UNION ALL
    SELECT c.* FROM e CROSS JOIN LATERAL (
      SELECT o.item, o.location, o.day, o.version, o.closing, o.status, o.retracted, o.qty, o.posts, o.cause_offset
        FROM output_days o
       WHERE o.ns = $8::int AND o.item = e.item COLLATE "C" AND o.location = e.location COLLATE "C"
         AND o.day < e.day AND NOT o.retracted
       ORDER BY o.day DESC LIMIT 1) AS c
  )
  SELECT p.epoch, p.frontier,
    (SELECT coalesce(json_agg(json_build_array(item, location, txn, rev, op, day, qty)), '[]') FROM a) AS authority,
    (SELECT coalesce(json_agg(json_build_array(item, location, day)), '[]') FROM e) AS earliest,
    (SELECT coalesce(json_agg(json_build_array(item, location, day, version, closing, status, retracted, qty, posts,
                                               cause_offset)), '[]') FROM w) AS days
  FROM (SELECT 1) AS one LEFT JOIN partitions p ON p.namespace = $1 AND p.partition = $2`;

/**
 * The whole batch commit, one statement (its own transaction). `ok` holds a row only when
 * the row-locked partition has the request's epoch and frontier and none of the transactions
 * the window cache took as new is stored (`fresh`: one LATERAL probe per transaction, for the
 * reason `loadWindowSql` gives; as a join, a new namespace's cached generic plan read its whole
 * authority by a bitmap scan per batch: 9,635 rows at batch size 1 in the bench, the store
 * call growing from 1.2 to 2.7 ms over 30 s); every write depends on it.
 * `w` reads the other steps' counts, so it runs after them: its clock reading is the work
 * time just before COMMIT (the figure cannot include its own commit, docs/design.md#logs-and-exit). The
 * client cannot time inside a one-round-trip transaction, so the server's clock does it.
 *
 *  $1 namespace, $2 partition, $3 epoch, $4 expected frontier, $5 new frontier,
 *  $6–$15 decisions, $16–$23 authority (one row per txn), $24–$33 output versions with their
 *  outbox records (one row each, ids drawn in this order under the partition's lock: the relay's
 *  cursor relies on it, migration 0007), $34 counts by outcome, $35 notify, $36–$45 the day rows the batch changed
 *  (key-window.ts `dayRowChanges`: a new latest version or a new total, one upsert row per day,
 *  picked by the client, so no server-side sort of every version of a big batch), $46 the
 *  namespace's id, which keys the per-record tables (migration 0006; partitions keep the text),
 *  $47–$49 the transactions taken as new without a read (window-cache.ts).
 */
export const commitBatchSql = `
  WITH p AS (
    SELECT epoch, frontier FROM partitions WHERE namespace = $1 AND partition = $2 FOR UPDATE
  ), fresh AS (
    SELECT count(*)::int AS stale
      FROM unnest($47::text[], $48::text[], $49::text[]) AS u(item, location, txn)
      CROSS JOIN LATERAL (
        SELECT 1 FROM authority a
         WHERE a.ns = $46::int AND a.item = u.item COLLATE "C" AND a.location = u.location COLLATE "C"
           AND a.txn = u.txn COLLATE "C"
         LIMIT 1) AS held
  ), ok AS (
    SELECT 1 FROM p, fresh WHERE p.epoch = $3 AND p.frontier = $4 AND fresh.stale = 0
  ), d AS (
    INSERT INTO decisions (ns, partition, record_offset, outcome, item, location, txn, rev,
                           raw_key, raw_value, quarantined, detail, epoch)
    SELECT $46::int, $2, u.o, u.outcome, u.item, u.location, u.txn, u.rev, u.k, u.v, u.q, u.detail, $3
      FROM unnest($6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[],
                  $12::bytea[], $13::bytea[], $14::bool[], $15::text[])
           AS u(o, outcome, item, location, txn, rev, k, v, q, detail)
     WHERE EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  ), a AS (
    INSERT INTO authority AS t (ns, item, location, txn, rev, op, day, qty, cause_partition, cause_offset)
    SELECT $46::int, u.item, u.location, u.txn, u.rev, u.op, u.day, u.qty, $2, u.cause
      FROM unnest($16::text[], $17::text[], $18::text[], $19::int[], $20::text[], $21::text[], $22::int[],
                  $23::bigint[]) AS u(item, location, txn, rev, op, day, qty, cause)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (ns, item, location, txn) DO UPDATE
       SET rev = EXCLUDED.rev, op = EXCLUDED.op, day = EXCLUDED.day, qty = EXCLUDED.qty,
           cause_partition = EXCLUDED.cause_partition, cause_offset = EXCLUDED.cause_offset
     WHERE amends_assert(t.rev < EXCLUDED.rev, 'authority revision must grow: ' || t.txn)
    RETURNING 1
  ), v AS (
    INSERT INTO output_versions (ns, item, location, day, version, closing, status, retracted,
                                 cause_partition, cause_offset, record_key, record_value)
    SELECT $46::int, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause, u.k, u.v
      FROM unnest($24::text[], $25::text[], $26::text[], $27::int[], $28::bigint[], $29::text[], $30::bool[],
                  $31::bigint[], $32::bytea[], $33::bytea[]) WITH ORDINALITY
           AS u(item, location, day, version, closing, status, retracted, cause, k, v, n)
     WHERE EXISTS (SELECT 1 FROM ok)
     ORDER BY u.n
    RETURNING 1
  ), od AS (
    INSERT INTO output_days AS t (ns, item, location, day, version, closing, status, retracted,
                                  cause_partition, cause_offset, qty, posts)
    SELECT $46::int, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause, u.qty, u.posts
      FROM unnest($36::text[], $37::text[], $38::text[], $39::int[], $40::bigint[], $41::text[], $42::bool[],
                  $43::bigint[], $44::bigint[], $45::int[])
           AS u(item, location, day, version, closing, status, retracted, cause, qty, posts)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (ns, item, location, day) DO UPDATE
       SET version = EXCLUDED.version, closing = EXCLUDED.closing, status = EXCLUDED.status,
           retracted = EXCLUDED.retracted, cause_partition = EXCLUDED.cause_partition,
           cause_offset = EXCLUDED.cause_offset, qty = EXCLUDED.qty, posts = EXCLUDED.posts
     -- A new version, or the same version with a new total only (a qty-0 post, changes that net out).
     WHERE amends_assert(t.version < EXCLUDED.version
                         OR (t.version = EXCLUDED.version AND t.closing IS NOT DISTINCT FROM EXCLUDED.closing
                             AND t.retracted = EXCLUDED.retracted AND t.cause_offset = EXCLUDED.cause_offset),
                         'output version must grow: ' || t.day)
    RETURNING 1
  ), w AS (
    UPDATE partitions
       SET frontier = $5,
           last_first_offset = $6[1],
           last_last_offset = $6[cardinality($6)],
           last_records = CASE WHEN amends_assert(
                                 c.d = cardinality($6) AND c.a = cardinality($16) AND c.v = cardinality($24)
                                 AND c.od = cardinality($36),
                                 'batch rows written: ' || c.d || ' ' || c.a || ' ' || c.v || ' ' || c.od)
                          THEN cardinality($6) END,
           last_counts = $34::jsonb,
           last_epoch = $3,
           last_work_elapsed_ns = greatest(0, round(extract(epoch FROM clock_timestamp() - transaction_timestamp())
                                                    * 1000000000))::bigint,
           last_committed_at = clock_timestamp()
      FROM (SELECT (SELECT count(*) FROM d) AS d, (SELECT count(*) FROM a) AS a, (SELECT count(*) FROM v) AS v,
                   (SELECT count(*) FROM od) AS od) AS c
     WHERE namespace = $1 AND partition = $2 AND EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  )
  SELECT p.epoch, p.frontier, (SELECT count(*) FROM w)::int AS committed, (SELECT stale FROM fresh) AS stale,
         (SELECT count(*) FROM (SELECT pg_notify('${outboxChannel}', $1) FROM w WHERE $35::bool) AS n)::int AS notified
    FROM (SELECT 1) AS one LEFT JOIN p ON true`;

interface EpochFrontierRow {
  epoch: unknown;
  frontier: unknown;
}

interface LoadWindowRow extends EpochFrontierRow {
  authority: unknown[][];
  earliest: unknown[][];
  days: unknown[][];
}

interface CommitRow extends EpochFrontierRow {
  committed: number;
  /** Transactions taken as new that are stored: nothing was written. */
  stale: number;
  notified: number;
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

  /**
   * The batch as docs/design.md#partition-lifecycle promises it: one partition, offsets ascending
   * from the frontier.
   */
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

/** `loadWindowSql`'s parameters: the namespace, the partition, every revision of the batch, the namespace's id. */
export function loadWindowValues(
  namespace: string,
  nsId: number,
  partition: number,
  needs: ReadonlyMap<string, KeyNeeds>,
): unknown[] {
  const revisions = [...needs.values()].flatMap((n) =>
    n.revisions.map((r) => ({ item: n.stockKey.item, location: n.stockKey.location, ...r })),
  );
  return [
    namespace,
    partition,
    revisions.map((r) => r.item),
    revisions.map((r) => r.location),
    revisions.map((r) => r.txn),
    revisions.map((r) => r.rev),
    revisions.map((r) => r.day),
    nsId,
  ];
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

function partitionRowOf(row: EpochFrontierRow | undefined, what: string): PartitionRow {
  assertInvariant(row !== undefined, `${what} returned no partition row`);
  return {
    epoch: int8ToSafeInteger(row.epoch, `${what}: epoch`),
    frontier: int8ToSafeInteger(row.frontier, `${what}: frontier`),
  };
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
