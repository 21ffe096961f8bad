/**
 * The view (docs/design.md#view): per (item, location, day) the highest version read from the
 * output topic, retractions included, in PostgreSQL, with the view's own per-partition
 * frontier moved in the same transaction as the rows a batch changes.
 *
 * Per record, against the highest version held (or seen earlier in the same batch):
 * - higher version → it replaces the row (applied);
 * - lower version → ignored, counted stale;
 * - same version, identical value bytes → ignored, counted duplicate (the relay republishes
 *   the outbox's bytes unchanged, so identical content is identical bytes);
 * - same version, different bytes → a fatal conflict: the batch rolls back, nothing is
 *   overwritten and the frontier stays before it.
 *
 * A record that is not an output envelope of this namespace (docs/design.md#output-envelope), whose key does
 * not match its value, or that sits on a partition its stock key does not map to, is fatal
 * too: the output topic is the relay's alone.
 */

import type { NamespaceConfig } from '../../domain/config.js';
import { outputEnvelopeSchema, outputRecordKey } from '../../domain/export-lines.js';
import type { BalanceStatus, OutputVersion } from '../../domain/output-version.js';
import { stockKeyTerms } from '../../domain/stock-key-terms.js';
import { AmendsError, operationalError } from '../../kernel/amends-error.js';
import { assertInvariant } from '../../kernel/invariant.js';
import { int8ToSafeInteger } from '../../kernel/safe-integer.js';
import type { OutputRecord } from '../kafka/output-consumer.js';
import { namespaceId } from '../store/namespace-registry.js';
import type { Queryable } from '../store/postgres.js';
import type { RoleLock } from './role-lock.js';
import type { ViewCounts, ViewPartitionRow } from './view-queries.js';

/** A same-version record with different content: reported, never applied. */
export class ViewConflict extends AmendsError {
  constructor(message: string) {
    super('operational', message);
  }
}

const dayPattern = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/** The output envelope (docs/design.md#output-envelope) of one record, or a one-line reason it is not one. */
export function decodeOutputRecord(
  record: OutputRecord,
  config: NamespaceConfig,
): { version: OutputVersion } | { invalid: string } {
  if (record.value === null) return { invalid: 'no value' };
  let v: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(record.value.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { invalid: 'not an object' };
    v = parsed as Record<string, unknown>;
  } catch {
    return { invalid: 'not JSON' };
  }
  const cause = v.cause as Record<string, unknown> | null | undefined;
  const isCount = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  if (v.schema !== outputEnvelopeSchema) return { invalid: `schema ${JSON.stringify(v.schema)}` };
  if (v.namespace !== config.namespace) return { invalid: `namespace ${JSON.stringify(v.namespace)}` };
  if (typeof v.item !== 'string' || typeof v.location !== 'string') return { invalid: 'item/location' };
  if (typeof v.day !== 'string' || !dayPattern.test(v.day)) return { invalid: 'day' };
  if (!Number.isSafeInteger(v.version) || (v.version as number) < 1) return { invalid: 'version' };
  if (typeof v.retracted !== 'boolean') return { invalid: 'retracted' };
  const statusOk = v.status === 'NEGATIVE' || v.status === 'LOW' || v.status === 'OK';
  if (v.retracted ? v.closing !== null || v.status !== null : !Number.isSafeInteger(v.closing) || !statusOk) {
    return { invalid: 'closing/status' };
  }
  if (typeof cause !== 'object' || cause === null || !isCount(cause.partition) || !isCount(cause.offset)) {
    return { invalid: 'cause' };
  }
  const version: OutputVersion = {
    item: v.item,
    location: v.location,
    day: v.day,
    version: v.version as number,
    closing: v.closing as number | null,
    status: v.status as BalanceStatus | null,
    retracted: v.retracted,
    cause: { partition: cause.partition as number, offset: cause.offset as number },
  };
  if (record.key === null || record.key.toString('utf8') !== outputRecordKey(version)) {
    return { invalid: 'the key does not match the value' };
  }
  const stockKey = stockKeyTerms(config, version.item, version.location);
  if (!stockKey) return { invalid: `unknown stock key ${version.item}@${version.location}` };
  if (stockKey.partition !== record.partition) {
    return { invalid: `stock key ${version.item}@${version.location} maps to partition ${stockKey.partition}` };
  }
  return { version };
}

interface Held {
  version: number;
  value: Buffer;
}

interface Upsert {
  v: OutputVersion;
  value: Buffer;
  partition: number;
  offset: number;
}

/** A polled record with its decoded envelope. */
interface DecodedRecord {
  record: OutputRecord;
  v: OutputVersion;
}

/** What one batch does to the view, decided in memory before anything is written. */
interface ViewBatch {
  /** The batch's partitions, ascending (the lock order). */
  partitions: readonly number[];
  upserts: Upsert[];
  delta: Map<number, ViewCounts>;
  /** Per partition, the offset of its last record in the batch: the new frontier is one past it. */
  last: Map<number, number>;
}

function dayKey(v: { item: string; location: string; day: string }): string {
  return JSON.stringify([v.item, v.location, v.day]);
}

/**
 * Applies polled records of the output topic to the view. `positions` is the next offset per
 * partition this process expects; each batch checks it against the durable frontier under
 * the partition rows' lock, so a second writer (excluded by the role lock anyway) could
 * never make the view apply a record twice.
 *
 * Every batch runs on the role lock's session, the one the positions were read
 * on: a session cannot outlive its server, so a batch never meets a database that went back
 * in time under positions read before (a failover that lost commits, a restored backup). The
 * next session reads the frontiers again and applies from there: the records it applied
 * before come again, as the same versions (re-decided identically, docs/design.md#store).
 */
export class OutputView {
  readonly positions = new Map<number, number>();
  readonly counts = new Map<number, ViewCounts>();
  /** The namespace's id, which keys view_rows (view_partitions keep the text); read by the first apply. */
  private nsId: number | undefined;

  constructor(
    private readonly lock: RoleLock,
    private readonly config: NamespaceConfig,
    initial: readonly ViewPartitionRow[],
  ) {
    for (const row of initial) {
      this.positions.set(row.partition, row.frontier);
      this.counts.set(row.partition, { applied: row.applied, stale: row.stale, duplicate: row.duplicate });
    }
  }

  /** One transaction: read the held versions, decide each record in order, write, move frontiers. */
  async apply(records: readonly OutputRecord[]): Promise<ViewCounts> {
    if (records.length === 0) return { applied: 0, stale: 0, duplicate: 0 };
    const decoded = records.map((record) => this.decode(record));
    const partitions = [...new Set(records.map((r) => r.partition))].sort((a, b) => a - b);
    // The session may have ended while the view polled: then nothing is applied on it.
    this.lock.throwIfLost();
    const client = this.lock.client;
    try {
      await client.query('BEGIN');
      await this.lockFrontiers(client, partitions);
      this.nsId ??= await namespaceId(client, this.config.namespace);
      const held = await readHeld(client, this.nsId, decoded);
      const batch = decideBatch(decoded, held, partitions);
      if (batch.upserts.length > 0) await writeUpserts(client, this.nsId, batch.upserts);
      await moveFrontiers(client, this.config.namespace, batch);
      await client.query('COMMIT');
      return this.committed(batch);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }

  /** The record's envelope, at or past this view's position of its partition; anything else is fatal. */
  private decode(record: OutputRecord): DecodedRecord {
    const expected = this.positions.get(record.partition);
    assertInvariant(expected !== undefined, `a record of partition ${record.partition}, which the view lacks`);
    assertInvariant(
      record.offset >= expected,
      `partition ${record.partition} offset ${record.offset} is below the view frontier ${expected}`,
    );
    const d = decodeOutputRecord(record, this.config);
    if ('invalid' in d) {
      throw operationalError(
        `output topic record partition ${record.partition} offset ${record.offset} is not an output envelope of namespace ${this.config.namespace} (${d.invalid}); the view stops before it`,
      );
    }
    return { record, v: d.version };
  }

  /** Locks the batch's partition rows and checks their frontiers are where this view left them. */
  private async lockFrontiers(client: Queryable, partitions: readonly number[]): Promise<void> {
    const frontiers = await client.query(
      `SELECT partition, frontier FROM view_partitions
          WHERE namespace = $1 AND partition = ANY($2::int[]) ORDER BY partition FOR UPDATE`,
      [this.config.namespace, partitions],
    );
    for (const row of frontiers.rows) {
      const durable = int8ToSafeInteger(row.frontier, 'view frontier');
      if (durable !== this.positions.get(row.partition)) {
        throw operationalError(
          `the view frontier of partition ${row.partition} is ${durable} in PostgreSQL, this view expected ${this.positions.get(row.partition)}: another view process wrote it; stopping`,
        );
      }
    }
    assertInvariant(frontiers.rows.length === partitions.length, 'a view partition row is missing');
  }

  /** After COMMIT: the process's counts and positions follow the durable ones; the batch's totals. */
  private committed(batch: ViewBatch): ViewCounts {
    const total: ViewCounts = { applied: 0, stale: 0, duplicate: 0 };
    for (const p of batch.partitions) {
      const d = batch.delta.get(p) as ViewCounts;
      const c = this.counts.get(p) as ViewCounts;
      c.applied += d.applied;
      c.stale += d.stale;
      c.duplicate += d.duplicate;
      total.applied += d.applied;
      total.stale += d.stale;
      total.duplicate += d.duplicate;
      this.positions.set(p, (batch.last.get(p) as number) + 1);
    }
    return total;
  }
}

/** The held version and bytes of each (item, location, day) the batch names, by `dayKey`. */
async function readHeld(
  client: Queryable,
  nsId: number,
  decoded: readonly DecodedRecord[],
): Promise<Map<string, Held>> {
  const keys = [...new Map(decoded.map((d) => [dayKey(d.v), d.v])).values()];
  const heldRows = await client.query<{
    item: string;
    location: string;
    day: string;
    version: number;
    record_value: Buffer;
  }>(
    `SELECT r.item, r.location, r.day, r.version, r.record_value
           FROM unnest($2::text[], $3::text[], $4::text[]) AS k(item, location, day)
           JOIN view_rows r ON r.ns = $1 AND r.item = k.item AND r.location = k.location AND r.day = k.day`,
    [nsId, keys.map((k) => k.item), keys.map((k) => k.location), keys.map((k) => k.day)],
  );
  return new Map<string, Held>(heldRows.rows.map((r) => [dayKey(r), { version: r.version, value: r.record_value }]));
}

/**
 * Each record in order against the highest version held or seen earlier in the batch (the
 * module's comment gives the rule); `held` is updated as the batch goes. A conflict throws.
 */
function decideBatch(
  decoded: readonly DecodedRecord[],
  held: Map<string, Held>,
  partitions: readonly number[],
): ViewBatch {
  const upserts = new Map<string, Upsert>();
  const delta = new Map<number, ViewCounts>(partitions.map((p) => [p, { applied: 0, stale: 0, duplicate: 0 }]));
  const last = new Map<number, number>();
  for (const { record, v } of decoded) {
    const key = dayKey(v);
    const value = record.value as Buffer;
    const current = held.get(key);
    const counts = delta.get(record.partition) as ViewCounts;
    last.set(record.partition, record.offset);
    if (current === undefined || v.version > current.version) {
      held.set(key, { version: v.version, value });
      upserts.set(key, { v, value, partition: record.partition, offset: record.offset });
      counts.applied += 1;
    } else if (v.version < current.version) {
      counts.stale += 1;
    } else if (value.equals(current.value)) {
      counts.duplicate += 1;
    } else {
      throw new ViewConflict(
        `conflict on output topic partition ${record.partition} offset ${record.offset}: (item ${JSON.stringify(v.item)}, location ${JSON.stringify(v.location)}, day ${v.day}, version ${v.version}) is held as ${current.value.toString('utf8')} but this record says ${value.toString('utf8')}; nothing was overwritten, the view stops before it`,
      );
    }
  }
  return { partitions, upserts: [...upserts.values()], delta, last };
}

/** Writes the batch's new highest versions, one row per (item, location, day). */
async function writeUpserts(client: Queryable, nsId: number, rows: readonly Upsert[]): Promise<void> {
  const written = await client.query(
    `INSERT INTO view_rows AS r (ns, item, location, day, version, closing, status, retracted,
                                       cause_partition, cause_offset, record_value, topic_partition, topic_offset, applied_at)
           SELECT $1::int, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted,
                  u.cp, u.co, u.value, u.tp, u.tof, clock_timestamp()
             FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::text[], $8::bool[],
                         $9::int[], $10::bigint[], $11::bytea[], $12::int[], $13::bigint[])
                  AS u(item, location, day, version, closing, status, retracted, cp, co, value, tp, tof)
           ON CONFLICT (ns, item, location, day) DO UPDATE
              SET version = EXCLUDED.version, closing = EXCLUDED.closing, status = EXCLUDED.status,
                  retracted = EXCLUDED.retracted, cause_partition = EXCLUDED.cause_partition,
                  cause_offset = EXCLUDED.cause_offset, record_value = EXCLUDED.record_value,
                  topic_partition = EXCLUDED.topic_partition, topic_offset = EXCLUDED.topic_offset,
                  applied_at = EXCLUDED.applied_at
            WHERE r.version < EXCLUDED.version`,
    [
      nsId,
      rows.map((u) => u.v.item),
      rows.map((u) => u.v.location),
      rows.map((u) => u.v.day),
      rows.map((u) => u.v.version),
      rows.map((u) => u.v.closing),
      rows.map((u) => u.v.status),
      rows.map((u) => u.v.retracted),
      rows.map((u) => u.v.cause.partition),
      rows.map((u) => u.v.cause.offset),
      rows.map((u) => u.value),
      rows.map((u) => u.partition),
      rows.map((u) => u.offset),
    ],
  );
  // Every upsert raised a version under the partition locks: anything else is a bug.
  assertInvariant(written.rowCount === rows.length, `view upsert wrote ${written.rowCount} of ${rows.length}`);
}

/** Moves each partition's frontier past the batch and adds its counts, in the same transaction. */
async function moveFrontiers(client: Queryable, namespace: string, batch: ViewBatch): Promise<void> {
  const { partitions, delta, last } = batch;
  const moved = await client.query(
    `UPDATE view_partitions p
            SET frontier = u.frontier, applied = p.applied + u.applied, stale = p.stale + u.stale,
                duplicate = p.duplicate + u.duplicate, updated_at = clock_timestamp()
           FROM unnest($2::int[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
                AS u(partition, frontier, applied, stale, duplicate)
          WHERE p.namespace = $1 AND p.partition = u.partition`,
    [
      namespace,
      partitions,
      partitions.map((p) => (last.get(p) as number) + 1),
      partitions.map((p) => delta.get(p)?.applied ?? 0),
      partitions.map((p) => delta.get(p)?.stale ?? 0),
      partitions.map((p) => delta.get(p)?.duplicate ?? 0),
    ],
  );
  assertInvariant(moved.rowCount === partitions.length, `moved ${moved.rowCount} view frontiers`);
}
