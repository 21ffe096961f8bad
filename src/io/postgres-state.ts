/**
 * The production `State` (ports.ts, worker.md §5–§7): one namespace's partitions, decisions,
 * authority, output versions and outbox in PostgreSQL (migrations/0002-worker-store.ts).
 *
 * Every write is ONE statement that is its own (implicit) transaction, so a commit costs one
 * round trip and no transaction is ever held open while the worker waits on anything else:
 * - claim: an upsert that increments the epoch under the partition row lock;
 * - process: a single statement whose first step locks the partition row (FOR UPDATE) and
 *   checks epoch and frontier; only if both match do the data-modifying steps insert the
 *   batch's decisions, authority, output versions, outbox envelopes, move the frontier with
 *   the last work, and NOTIFY the relay. A mismatch writes nothing; any error rolls all back.
 *
 * The batch is decided in memory *before* that statement, on key states whose validity the
 * statement's own check proves (see `PartitionCache`); a key state missing from the cache is
 * read by one statement, in one snapshot together with the partition row.
 *
 * Failure classification (ports.ts StoreFailure), by how far the statement got
 * (store-connection.ts): never sent, or answered with an ERROR (lock_timeout,
 * statement_timeout, a constraint, serialization) → `failed_before_commit`; lost while the
 * committing statement was in flight (connection lost, FATAL, no reply, an abort) →
 * `unknown_outcome`. Reads (observe, the key load) can only fail before commit.
 */
import { type NamespaceConfig, type StockKeyConfig, stockKeyId } from '../domain/config.js';
import { type DecideResult, decideWithKeyState, type Screened, screenRecord } from '../domain/decide.js';
import type { Outcome } from '../domain/decision.js';
import { outputRecordKey, outputRecordValue } from '../domain/export-lines.js';
import { type AuthorityEntry, type DayOutput, type KeyState, restoreKeyState } from '../domain/ledger-state.js';
import type { BalanceStatus } from '../domain/output-version.js';
import {
  type PartitionRow,
  type ProcessOutcome,
  type ProcessRequest,
  type SourceRecord,
  type State,
  StoreFailure,
} from '../machines/ports.js';
import { assertInvariant } from './invariant.js';
import type { Database } from './postgres.js';
import { int8ToSafeInteger, nullableInt8ToSafeInteger } from './safe-integer.js';
import { StatementFailure, StoreConnection } from './store-connection.js';

/** The NOTIFY channel a commit with new outbox envelopes signals; the payload is the namespace. */
export const outboxChannel = 'amends_outbox';

/** At most this many records per `process` call: the batch is one statement's arrays. */
export const batchRecordsMax = 10_000;

/** Prepared statement names (one parse per session); tests' fault proxies match on them. */
export const storeStatementNames = {
  claim: 'amends_claim',
  observe: 'amends_observe',
  loadKeys: 'amends_load_keys',
  commitBatch: 'amends_commit_batch',
} as const;

export interface PostgresStateOptions {
  /** The session's application_name (pg_stat_activity shows who holds what). */
  applicationName?: string;
  /** Recorded as the partition's owner by each claim, for inspection. */
  workerId?: string;
}

/**
 * Key states of one partition's stock keys, valid exactly at (epoch, frontier): they equal
 * what PostgreSQL holds after deciding every offset below `frontier`.
 *
 * Why a cache is safe: a stock key maps to exactly one partition (config), and only an
 * APPLIED decision of that partition writes its authority and outputs (ROUTING rejects
 * others). Every such write commits in the same statement that moves that partition's
 * frontier, under its row lock, and only if epoch and frontier equal the cache's. So while
 * the durable (epoch, frontier) equals the cache's, nobody has changed these keys, and the
 * commit statement re-checks exactly that under the lock before it writes anything.
 * After deciding a batch the cache holds the *candidate* state for frontier' = last + 1: if
 * the commit's outcome was unknown and it did commit, the next call expects frontier' and
 * uses it; any other expectation drops the cache and reloads. A claim drops it too.
 */
interface PartitionCache {
  epoch: number;
  frontier: number;
  /** By stockKeyId(item, location); keys are loaded the first time a batch needs them. */
  keys: Map<string, KeyState>;
}

interface LoadedKeys {
  row: PartitionRow;
  keys: Map<string, KeyState>;
}

const claimSql = `
  INSERT INTO partitions AS p (namespace, partition, epoch, owner) VALUES ($1, $2, 1, $3)
  ON CONFLICT (namespace, partition)
  DO UPDATE SET epoch = p.epoch + 1, owner = EXCLUDED.owner, claimed_at = now()
  RETURNING epoch, frontier`;

const observeSql = 'SELECT epoch, frontier FROM partitions WHERE namespace = $1 AND partition = $2';

/** The partition row and the keys' state in one snapshot (one statement): consistent with each other. */
const loadKeysSql = `
  SELECT p.epoch, p.frontier,
    (SELECT coalesce(json_agg(json_build_array(a.item, a.location, a.txn, a.rev, a.op, a.day, a.qty)), '[]')
       FROM unnest($3::text[], $4::text[]) AS k(item, location)
       JOIN authority a ON a.namespace = $1 AND a.item = k.item COLLATE "C" AND a.location = k.location COLLATE "C"
    ) AS authority,
    (SELECT coalesce(json_agg(json_build_array(o.item, o.location, o.day, o.version, o.closing, o.status, o.retracted)), '[]')
       FROM unnest($3::text[], $4::text[]) AS k(item, location)
       JOIN output_days o ON o.namespace = $1 AND o.item = k.item COLLATE "C" AND o.location = k.location COLLATE "C"
    ) AS outputs
  FROM (SELECT 1) AS one LEFT JOIN partitions p ON p.namespace = $1 AND p.partition = $2`;

/**
 * The whole batch commit, one statement (its own transaction). `ok` holds a row only when
 * the row-locked partition has the request's epoch and frontier; every write depends on it.
 * `w` reads the other steps' counts, so it runs after them: its clock reading is the work
 * time just before COMMIT (the figure cannot include its own commit, worker.md §7). The
 * client cannot time inside a one-round-trip transaction, so the server's clock does it.
 *
 *  $1 namespace, $2 partition, $3 epoch, $4 expected frontier, $5 new frontier,
 *  $6–$15 decisions, $16–$23 authority (one row per txn), $24–$33 output versions with their
 *  outbox records, $34 counts by outcome, $35 notify, $36–$43 the latest of those versions per
 *  (item, location, day) for output_days (picked by the client: one upsert row per day, and no
 *  server-side sort of every version of a big batch).
 */
const commitBatchSql = `
  WITH p AS (
    SELECT epoch, frontier FROM partitions WHERE namespace = $1 AND partition = $2 FOR UPDATE
  ), ok AS (
    SELECT 1 FROM p WHERE p.epoch = $3 AND p.frontier = $4
  ), d AS (
    INSERT INTO decisions (namespace, partition, record_offset, outcome, item, location, txn, rev,
                           raw_key, raw_value, quarantined, detail, epoch)
    SELECT $1, $2, u.o, u.outcome, u.item, u.location, u.txn, u.rev, u.k, u.v, u.q, u.detail, $3
      FROM unnest($6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[],
                  $12::bytea[], $13::bytea[], $14::bool[], $15::text[])
           AS u(o, outcome, item, location, txn, rev, k, v, q, detail)
     WHERE EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  ), a AS (
    INSERT INTO authority AS t (namespace, item, location, txn, rev, op, day, qty, cause_partition, cause_offset)
    SELECT $1, u.item, u.location, u.txn, u.rev, u.op, u.day, u.qty, $2, u.cause
      FROM unnest($16::text[], $17::text[], $18::text[], $19::int[], $20::text[], $21::text[], $22::int[],
                  $23::bigint[]) AS u(item, location, txn, rev, op, day, qty, cause)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (namespace, item, location, txn) DO UPDATE
       SET rev = EXCLUDED.rev, op = EXCLUDED.op, day = EXCLUDED.day, qty = EXCLUDED.qty,
           cause_partition = EXCLUDED.cause_partition, cause_offset = EXCLUDED.cause_offset
     WHERE amends_assert(t.rev < EXCLUDED.rev, 'authority revision must grow: ' || t.txn)
    RETURNING 1
  ), v AS (
    INSERT INTO output_versions (namespace, item, location, day, version, closing, status, retracted,
                                 cause_partition, cause_offset)
    SELECT $1, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause
      FROM unnest($24::text[], $25::text[], $26::text[], $27::int[], $28::bigint[], $29::text[], $30::bool[],
                  $31::bigint[]) AS u(item, location, day, version, closing, status, retracted, cause)
     WHERE EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  ), od AS (
    INSERT INTO output_days AS t (namespace, item, location, day, version, closing, status, retracted,
                                  cause_partition, cause_offset)
    SELECT $1, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause
      FROM unnest($36::text[], $37::text[], $38::text[], $39::int[], $40::bigint[], $41::text[], $42::bool[],
                  $43::bigint[]) AS u(item, location, day, version, closing, status, retracted, cause)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (namespace, item, location, day) DO UPDATE
       SET version = EXCLUDED.version, closing = EXCLUDED.closing, status = EXCLUDED.status,
           retracted = EXCLUDED.retracted, cause_partition = EXCLUDED.cause_partition,
           cause_offset = EXCLUDED.cause_offset
     WHERE amends_assert(t.version < EXCLUDED.version, 'output version must grow: ' || t.day)
    RETURNING 1
  ), o AS (
    INSERT INTO outbox (namespace, partition, item, location, day, version, record_key, record_value)
    SELECT $1, $2, u.item, u.location, u.day, u.version, u.k, u.v
      FROM unnest($24::text[], $25::text[], $26::text[], $27::int[], $32::bytea[], $33::bytea[])
           WITH ORDINALITY AS u(item, location, day, version, k, v, n)
     WHERE EXISTS (SELECT 1 FROM ok)
     ORDER BY u.n
    RETURNING 1
  ), w AS (
    UPDATE partitions
       SET frontier = $5,
           last_first_offset = $6[1],
           last_last_offset = $6[cardinality($6)],
           last_records = CASE WHEN amends_assert(
                                 c.d = cardinality($6) AND c.a = cardinality($16) AND c.v = cardinality($24)
                                 AND c.o = cardinality($24) AND c.od = cardinality($36) AND c.od <= c.v,
                                 'batch rows written: ' || c.d || ' ' || c.a || ' ' || c.v || ' ' || c.o)
                          THEN cardinality($6) END,
           last_counts = $34::jsonb,
           last_epoch = $3,
           last_work_elapsed_ns = greatest(0, round(extract(epoch FROM clock_timestamp() - transaction_timestamp())
                                                    * 1000000000))::bigint,
           last_committed_at = clock_timestamp()
      FROM (SELECT (SELECT count(*) FROM d) AS d, (SELECT count(*) FROM a) AS a, (SELECT count(*) FROM v) AS v,
                   (SELECT count(*) FROM od) AS od, (SELECT count(*) FROM o) AS o) AS c
     WHERE namespace = $1 AND partition = $2 AND EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  )
  SELECT p.epoch, p.frontier, (SELECT count(*) FROM w)::int AS committed,
         (SELECT count(*) FROM (SELECT pg_notify('${outboxChannel}', $1) FROM w WHERE $35::bool) AS n)::int AS notified
    FROM (SELECT 1) AS one LEFT JOIN p ON true`;

interface EpochFrontierRow {
  epoch: unknown;
  frontier: unknown;
}

interface LoadKeysRow extends EpochFrontierRow {
  authority: unknown[][];
  outputs: unknown[][];
}

interface CommitRow extends EpochFrontierRow {
  committed: number;
  notified: number;
}

export class PostgresState implements State {
  private readonly connection: StoreConnection;
  private readonly namespace: string;
  private readonly owner: string | null;
  private readonly caches = new Map<number, PartitionCache>();

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
    this.caches.clear();
    await this.connection.close();
  }

  async claim(partition: number, signal: AbortSignal): Promise<PartitionRow> {
    this.assertPartition(partition);
    // A claim starts a new ownership: whatever this object decided before no longer counts.
    this.caches.delete(partition);
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

  async process(request: ProcessRequest, signal: AbortSignal): Promise<ProcessOutcome> {
    this.assertRequest(request);
    const { partition, epoch, expectedFrontier, records } = request;
    const screened = records.map((record) => screenRecord(record, this.config));

    let cache = this.caches.get(partition);
    // Nothing in the cache is valid while this call decides; it is put back below.
    this.caches.delete(partition);
    if (cache !== undefined && (cache.epoch !== epoch || cache.frontier !== expectedFrontier)) cache = undefined;
    cache ??= { epoch, frontier: expectedFrontier, keys: new Map() };

    const missing = missingKeys(screened, cache);
    if (missing.length > 0) {
      let loaded: LoadedKeys;
      try {
        loaded = await this.loadKeys(partition, missing, signal);
      } catch (error) {
        this.caches.set(partition, cache); // untouched: still valid at (epoch, expectedFrontier)
        throw error;
      }
      // Epochs and frontiers only grow, so an answer read without the row lock stays true.
      if (loaded.row.epoch !== epoch) return { kind: 'fenced', epoch: loaded.row.epoch };
      if (loaded.row.frontier !== expectedFrontier)
        return { kind: 'unexpected_frontier', frontier: loaded.row.frontier };
      for (const [id, state] of loaded.keys) cache.keys.set(id, state);
    }

    let results: DecideResult[];
    try {
      results = decideScreened(records, screened, cache.keys);
    } catch (error) {
      // The engine refused (e.g. a closing beyond 2^53): nothing was sent; the cache is gone.
      throw new StoreFailure('failed_before_commit', `deciding the batch failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const last = records[records.length - 1] as SourceRecord;
    const candidate: PartitionCache = { epoch, frontier: last.offset + 1, keys: cache.keys };

    let result: { rows: CommitRow[] };
    try {
      result = await this.run<CommitRow>(
        {
          name: storeStatementNames.commitBatch,
          text: commitBatchSql,
          values: this.commitValues(request, results, candidate.frontier),
        },
        signal,
        'process',
        true,
      );
    } catch (error) {
      // Valid only if it committed; then the next call expects exactly candidate.frontier.
      this.caches.set(partition, candidate);
      throw error;
    }
    const row = result.rows[0];
    assertInvariant(row !== undefined, 'the batch commit returned no row');
    if (row.epoch === null) {
      assertInvariant(row.committed === 0, 'a batch committed without a partition row');
      return { kind: 'fenced', epoch: 0 };
    }
    const durable = partitionRowOf(row, 'process');
    const matched = durable.epoch === epoch && durable.frontier === expectedFrontier;
    assertInvariant(matched === (row.committed === 1), `commit ${row.committed} disagrees with the partition row`);
    if (durable.epoch !== epoch) return { kind: 'fenced', epoch: durable.epoch };
    if (durable.frontier !== expectedFrontier) return { kind: 'unexpected_frontier', frontier: durable.frontier };
    this.caches.set(partition, candidate);
    return { kind: 'acknowledged', frontier: candidate.frontier };
  }

  /** Reads the partition row and the given keys' authority and latest outputs, in one snapshot. */
  private async loadKeys(partition: number, keys: StockKeyConfig[], signal: AbortSignal): Promise<LoadedKeys> {
    const result = await this.run<LoadKeysRow>(
      {
        name: storeStatementNames.loadKeys,
        text: loadKeysSql,
        values: [this.namespace, partition, keys.map((k) => k.item), keys.map((k) => k.location)],
      },
      signal,
      'loading key state',
      false,
    );
    const found = result.rows[0];
    assertInvariant(found !== undefined, 'loading key state returned no row');
    const row = found.epoch === null ? { epoch: 0, frontier: 0 } : partitionRowOf(found, 'load');
    const authority = new Map<string, [string, AuthorityEntry][]>();
    const outputs = new Map<string, [string, DayOutput][]>();
    for (const k of keys) {
      authority.set(stockKeyId(k.item, k.location), []);
      outputs.set(stockKeyId(k.item, k.location), []);
    }
    for (const [item, location, txn, rev, op, day, qty] of found.authority) {
      authority
        .get(stockKeyId(String(item), String(location)))
        ?.push([String(txn), authorityEntryOf(rev, op, day, qty)]);
    }
    for (const [item, location, day, version, closing, status, retracted] of found.outputs) {
      outputs
        .get(stockKeyId(String(item), String(location)))
        ?.push([String(day), dayOutputOf(version, closing, status, retracted)]);
    }
    const states = new Map<string, KeyState>();
    for (const [id, entries] of authority) {
      states.set(id, restoreKeyState({ authority: entries, outputs: outputs.get(id) ?? [] }));
    }
    return { row, keys: states };
  }

  private commitValues(request: ProcessRequest, results: DecideResult[], frontier: number): unknown[] {
    const n = results.length;
    const offsets: number[] = new Array(n);
    const outcomes: Outcome[] = new Array(n);
    const items: (string | null)[] = new Array(n);
    const locations: (string | null)[] = new Array(n);
    const txns: (string | null)[] = new Array(n);
    const revs: (number | null)[] = new Array(n);
    const rawKeys: (Uint8Array | null)[] = new Array(n);
    const rawValues: (Uint8Array | null)[] = new Array(n);
    const quarantined: boolean[] = new Array(n);
    const details: (string | null)[] = new Array(n);
    const counts: Partial<Record<Outcome, number>> = {};
    // The last authority change per (item, location, txn) wins: one upsert row per txn.
    const authority = new Map<
      string,
      { item: string; location: string; txn: string; entry: AuthorityEntry; cause: number }
    >();
    const versions = {
      items: [] as string[],
      locations: [] as string[],
      days: [] as string[],
      versions: [] as number[],
      closings: [] as (number | null)[],
      statuses: [] as (BalanceStatus | null)[],
      retracted: [] as boolean[],
      causes: [] as number[],
      recordKeys: [] as Buffer[],
      recordValues: [] as Buffer[],
    };
    results.forEach(({ decision, newVersions, authorityChange }, i) => {
      const record = request.records[i] as SourceRecord;
      assertInvariant(decision.offset === record.offset, `decision ${decision.offset} for record ${record.offset}`);
      offsets[i] = decision.offset;
      outcomes[i] = decision.outcome;
      items[i] = decision.item;
      locations[i] = decision.location;
      txns[i] = decision.txn;
      revs[i] = decision.rev;
      rawKeys[i] = record.key;
      rawValues[i] = record.value;
      quarantined[i] = decision.quarantined;
      // PostgreSQL text cannot hold U+0000; the detail is free text (export compares ignore it).
      details[i] = decision.detail === null ? null : decision.detail.replaceAll('\u0000', '\\u0000');
      counts[decision.outcome] = (counts[decision.outcome] ?? 0) + 1;
      if (authorityChange !== null) {
        assertInvariant(decision.item !== null && decision.location !== null, 'an authority change without a key');
        authority.set(stockKeyId(decision.item, decision.location) + authorityChange.txn, {
          item: decision.item,
          location: decision.location,
          txn: authorityChange.txn,
          entry: authorityChange.entry,
          cause: decision.offset,
        });
      }
      for (const v of newVersions) {
        versions.items.push(v.item);
        versions.locations.push(v.location);
        versions.days.push(v.day);
        versions.versions.push(v.version);
        versions.closings.push(v.closing);
        versions.statuses.push(v.status);
        versions.retracted.push(v.retracted);
        versions.causes.push(v.cause.offset);
        versions.recordKeys.push(Buffer.from(outputRecordKey(v), 'utf8'));
        versions.recordValues.push(Buffer.from(outputRecordValue(v, this.namespace), 'utf8'));
      }
    });
    const changes = [...authority.values()];
    const latest = latestVersionPerDay(versions);
    return [
      this.namespace,
      request.partition,
      request.epoch,
      request.expectedFrontier,
      frontier,
      offsets,
      outcomes,
      items,
      locations,
      txns,
      revs,
      rawKeys,
      rawValues,
      quarantined,
      details,
      changes.map((c) => c.item),
      changes.map((c) => c.location),
      changes.map((c) => c.txn),
      changes.map((c) => c.entry.rev),
      changes.map((c) => c.entry.op),
      changes.map((c) => c.entry.day),
      changes.map((c) => c.entry.qty),
      changes.map((c) => c.cause),
      versions.items,
      versions.locations,
      versions.days,
      versions.versions,
      versions.closings,
      versions.statuses,
      versions.retracted,
      versions.causes,
      versions.recordKeys,
      versions.recordValues,
      JSON.stringify(counts),
      versions.items.length > 0,
      latest.map((i) => versions.items[i]),
      latest.map((i) => versions.locations[i]),
      latest.map((i) => versions.days[i]),
      latest.map((i) => versions.versions[i]),
      latest.map((i) => versions.closings[i]),
      latest.map((i) => versions.statuses[i]),
      latest.map((i) => versions.retracted[i]),
      latest.map((i) => versions.causes[i]),
    ];
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

/**
 * The index of each (item, location, day)'s highest version among a batch's new versions, in
 * first-seen order: output_days keeps exactly that one. Versions of a day grow within a batch.
 */
function latestVersionPerDay(versions: {
  items: readonly string[];
  locations: readonly string[];
  days: readonly string[];
  versions: readonly number[];
}): number[] {
  const latest = new Map<string, number>();
  for (let i = 0; i < versions.days.length; i++) {
    const id = `${stockKeyId(versions.items[i] as string, versions.locations[i] as string)}\u0000${versions.days[i]}`;
    const seen = latest.get(id);
    assertInvariant(
      seen === undefined || (versions.versions[seen] as number) < (versions.versions[i] as number),
      `output versions of ${id} do not grow within the batch`,
    );
    latest.set(id, i);
  }
  return [...latest.values()];
}

/** The configured keys the batch needs that the cache does not hold yet. */
function missingKeys(screened: readonly Screened[], cache: PartitionCache): StockKeyConfig[] {
  const missing = new Map<string, StockKeyConfig>();
  for (const s of screened) {
    if (s.kind !== 'authority') continue;
    const id = stockKeyId(s.stockKey.item, s.stockKey.location);
    if (!cache.keys.has(id)) missing.set(id, s.stockKey);
  }
  return [...missing.values()];
}

function decideScreened(
  records: readonly SourceRecord[],
  screened: readonly Screened[],
  keys: Map<string, KeyState>,
): DecideResult[] {
  return screened.map((s, i) => {
    if (s.kind === 'decided') return s.result;
    const keyState = keys.get(stockKeyId(s.stockKey.item, s.stockKey.location));
    assertInvariant(keyState !== undefined, `no state loaded for ${s.stockKey.item}@${s.stockKey.location}`);
    return decideWithKeyState(records[i] as SourceRecord, s.envelope, s.stockKey, keyState);
  });
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
