/**
 * The outbox relay (docs/design.md#relay): publishes a namespace's pending outbox envelopes
 * to its output topic, then marks them published.
 *
 *   LISTEN amends_outbox ─┐ (or the polling fallback)
 *                         ▼
 *   read ≤ batchRowsMax pending rows in outbox order ─▶ enqueue each, in order, to the
 *   row's partition ─▶ await every delivery report ─▶ ONE UPDATE marks, per partition, the
 *   delivered prefix ─▶ again (at once when the batch was full)
 *
 * At-least-once by construction: a row is marked only after its acknowledgement, so a
 * crash between the two (or a lost / unknown report) publishes it again. The republished
 * bytes are the outbox's bytes, unchanged: the topic may hold identical duplicates of a
 * version, never two contents for one (docs/design.md#transport). The idempotent producer keeps its
 * own retries from duplicating or reordering within a partition.
 *
 * Only the holder of the relay's role lock runs this (role-lock.ts): two relays never
 * interleave. The lock's session also carries the LISTEN, and every read and mark: a batch
 * read from one server is never marked on another. After a failover or a restored backup the
 * database may have gone back in time, and ids it hands out again can belong to other
 * versions; a session cannot outlive its server, so a batch whose session broke is not
 * marked, and the next session reads the cursor again (republishing identical copies).
 *
 * The producer is source-producer.ts's: idempotent, acks=all, explicit partition, a delivery
 * report per record (dr_cb + setPollInterval), real flush/disconnect timeouts
 * (docs/design.md#library-facts). Publishing an envelope needs nothing more than publishing a source
 * record does.
 */

import { operationalError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { assertInvariant } from '../../kernel/invariant.js';
import { int8ToSafeInteger } from '../../kernel/safe-integer.js';
import { PublicationError, type QueuedRecord, type SourceProducer } from '../kafka/source-producer.js';
import type { JsonLog } from '../process/json-log.js';
import { namespaceId } from '../store/namespace-registry.js';
import { outboxChannel } from '../store/outbox-channel.js';
import type { OutputBinding } from './output-binding.js';
import type { RoleLock } from './role-lock.js';

/** Rows per batch: bounded memory and one UPDATE per batch. */
export const relayBatchRowsMax = 1_000;
/**
 * A namespace's unpublished envelopes in outbox order: per output partition, the versions
 * after its cursor (`relay_partitions.published_through`, migration 0007 says why a cursor is
 * exact) by the index `output_versions_outbox_order`, each range scan stopping at the batch
 * limit however long the history; then the first `$2` of them by id. $1 the namespace's id
 * (namespace-registry.ts), $3 its name.
 */
export const pendingOutboxRowsSql = `SELECT v.id, v.cause_partition AS partition, v.record_key, v.record_value
  FROM relay_partitions r
  CROSS JOIN LATERAL (
    SELECT id, cause_partition, record_key, record_value FROM output_versions
     WHERE ns = $1 AND cause_partition = r.partition AND id > r.published_through
     ORDER BY id LIMIT $2) AS v
  WHERE r.namespace = $3 ORDER BY v.id LIMIT $2`;
/**
 * Moves each partition's cursor to its delivered prefix's last id: one row per partition,
 * however many envelopes. Never backwards (`greatest`): a relay that lost its role lock
 * cannot undo what the active one marked; what it marks was delivered either way.
 */
const markPublishedSql = `UPDATE relay_partitions r
     SET published_through = greatest(r.published_through, u.through), updated_at = clock_timestamp()
    FROM unnest($2::int[], $3::bigint[]) AS u(partition, through)
   WHERE r.namespace = $1 AND r.partition = u.partition`;
/**
 * How many envelopes of a bound namespace ($1, its name) wait for the relay: per output
 * partition an index range after its cursor, so the count costs the backlog, not the history.
 */
export const pendingOutboxCountSql = `SELECT coalesce(sum(c.n), 0) AS n
  FROM relay_partitions r
  JOIN namespaces ns ON ns.namespace = r.namespace
  CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM output_versions v
     WHERE v.ns = ns.id AND v.cause_partition = r.partition AND v.id > r.published_through) AS c
  WHERE r.namespace = $1`;
/** The polling fallback: a missed NOTIFY (or none sent) delays publication by at most this. */
export const relayPollFallbackMs = 1_000;
/** After a batch with a failed or unknown delivery, wait this long before publishing again. */
const retryBackoffMs = 1_000;
/** Consecutive batches with failed deliveries before the relay gives up (exit 1), if they
 * also span the outage budget: a broker outage within the budget is ridden through. */
const consecutiveFailedBatchesMax = 10;

/**
 * Test-only fault hook (AMENDS_FAULT=relay-exit-after-publish): the relay kills itself with
 * SIGKILL after a batch's deliveries were acknowledged and before they are marked published,
 * so tests and the showcase can prove that such a crash only republishes identical records.
 */
export const relayFaultExitAfterPublish = 'relay-exit-after-publish';

export interface RelayStats {
  /** `stopped`: the process ended cleanly (its last heartbeat says so, standby or not). */
  state: 'standby' | 'active' | 'stopping' | 'stopped';
  batches: number;
  published_rows: number;
  republish_rows: number;
  last_published_id: number | null;
}

export interface OutboxRelayOptions {
  namespace: string;
  binding: OutputBinding;
  lock: RoleLock;
  producer: SourceProducer;
  log: JsonLog;
  faultExitAfterPublish: boolean;
  stats: RelayStats;
  /** `--outage-budget-s` in ms: how long deliveries may keep failing. */
  outageBudgetMs: number;
  /** Each turn of the publishing loop (for readiness: relay-metrics.ts). */
  onCycle?: () => void;
}

interface OutboxRow {
  id: number;
  partition: number;
  key: Uint8Array;
  value: Uint8Array;
}

interface QueuedRow {
  row: OutboxRow;
  record: QueuedRecord;
}

export class OutboxRelay {
  private wake: (() => void) | undefined;
  private woken = false;
  private failedBatches = 0;
  private failingSince = 0;

  constructor(private readonly o: OutboxRelayOptions) {}

  /** Publishes until `signal` fires (then drains the batch in flight and returns) or a fatal error. */
  async run(signal: AbortSignal): Promise<void> {
    const { lock, namespace } = this.o;
    lock.client.on('notification', (n) => {
      if (n.channel === outboxChannel && n.payload === namespace) this.notify();
    });
    // LISTEN before the first read: a commit after that read then still wakes us.
    await lock.client.query(`LISTEN ${outboxChannel}`);
    const nsId = await namespaceId(lock.client, namespace);
    signal.addEventListener('abort', () => this.notify(), { once: true });
    while (!signal.aborted) {
      lock.throwIfLost();
      const result = await this.publishBatch(nsId);
      this.o.onCycle?.();
      if (result.failed > 0) {
        if (this.failedBatches === 0) this.failingSince = Date.now();
        this.failedBatches += 1;
        const failingMs = Date.now() - this.failingSince;
        if (this.failedBatches >= consecutiveFailedBatchesMax && failingMs >= this.o.outageBudgetMs) {
          throw operationalError(
            `${this.failedBatches} batches in a row over ${Math.round(failingMs / 1000)} s had failed or unknown deliveries to ${this.o.binding.outputTopic} (last: ${result.detail}); the rows stay pending for the next relay`,
          );
        }
        await this.sleep(retryBackoffMs);
        continue;
      }
      this.failedBatches = 0;
      if (result.rows === relayBatchRowsMax) continue;
      await this.sleep(relayPollFallbackMs);
    }
  }

  private notify(): void {
    this.woken = true;
    this.wake?.();
  }

  /** Sleeps `ms`, or less when a notification (or the stop) arrives; a wake that came early counts. */
  private async sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wake = undefined;
        resolve();
      }
      this.wake = done;
    });
    this.woken = false;
  }

  /** `nsId`: the namespace's id, which keys the outbox. */
  private async publishBatch(nsId: number): Promise<{ rows: number; failed: number; detail: string }> {
    const started = process.hrtime.bigint();
    const rows = await this.readPending(nsId);
    if (rows.length === 0) return { rows: 0, failed: 0, detail: '' };
    const { queued, detail } = await this.enqueueInOrder(rows);
    const reports = await Promise.allSettled(queued.map((q) => q.record.delivered));
    if (this.o.faultExitAfterPublish && reports.some((r) => r.status === 'fulfilled')) {
      this.o.log.write('fault_injected', { fault: relayFaultExitAfterPublish, acknowledged_rows: reports.length });
      process.kill(process.pid, 'SIGKILL');
    }
    const delivered = deliveredPrefixes(rows.length, queued, reports, detail);
    if (delivered.through.size > 0) await this.markPublished(delivered.through);
    this.recordBatch(rows, delivered, started);
    return { rows: rows.length, failed: rows.length - delivered.marked, detail: delivered.detail };
  }

  /** At most `relayBatchRowsMax` pending rows in outbox order, each for a partition the topic has. */
  private async readPending(nsId: number): Promise<OutboxRow[]> {
    const { lock, namespace, binding } = this.o;
    lock.throwIfLost();
    const read = await lock.client.query<{ id: string; partition: number; record_key: Buffer; record_value: Buffer }>(
      pendingOutboxRowsSql,
      [nsId, relayBatchRowsMax, namespace],
    );
    if (read.rows.length === 0) return [];
    const rows: OutboxRow[] = read.rows.map((r) => ({
      id: int8ToSafeInteger(r.id, 'outbox id'),
      partition: r.partition,
      key: r.record_key,
      value: r.record_value,
    }));
    for (const row of rows) {
      assertInvariant(
        row.partition >= 0 && row.partition < binding.partitions,
        `outbox row ${row.id} is for partition ${row.partition}, the output topic has ${binding.partitions}`,
      );
    }
    return rows;
  }

  /**
   * Enqueues strictly in outbox order; the first record librdkafka refuses stops the batch
   * (what follows would otherwise overtake it in its partition). `detail`: that refusal.
   */
  private async enqueueInOrder(rows: readonly OutboxRow[]): Promise<{ queued: QueuedRow[]; detail: string }> {
    const { producer, binding } = this.o;
    const queued: QueuedRow[] = [];
    let detail = '';
    for (const row of rows) {
      try {
        queued.push({ row, record: await producer.enqueue(binding.outputTopic, row.partition, row.key, row.value) });
      } catch (error) {
        if (!(error instanceof PublicationError)) throw error;
        detail = `outbox row ${row.id}: ${error.message}`;
        break;
      }
    }
    return { queued, detail };
  }

  /** ONE UPDATE moves every delivered partition's cursor. */
  private async markPublished(through: ReadonlyMap<number, number>): Promise<void> {
    const { lock, namespace } = this.o;
    // The session may have ended while the batch was published: then it is not marked.
    lock.throwIfLost();
    const update = await lock.client.query(markPublishedSql, [namespace, [...through.keys()], [...through.values()]]);
    // The binding made a row per partition (output-binding.ts), and nothing deletes one.
    assertInvariant(
      update.rowCount === through.size,
      `relay cursors moved: ${update.rowCount} of ${through.size} partitions of ${namespace}`,
    );
  }

  /** The batch in the stats and the log line. */
  private recordBatch(rows: readonly OutboxRow[], delivered: DeliveredPrefixes, started: bigint): void {
    const { binding, log, stats } = this.o;
    const { through, marked, failed, detail } = delivered;
    stats.batches += 1;
    stats.published_rows += marked;
    stats.republish_rows += rows.length - marked;
    stats.last_published_id = through.size > 0 ? Math.max(...through.values()) : stats.last_published_id;
    // A batch wholly delivered is routine (debug: one line per record when records trickle
    // in); one with a failed or unknown delivery, republished next, is worth a warning.
    const level = failed > 0 ? 'warn' : 'debug';
    if (!log.enabled(level)) return;
    log.write(
      'relay_published',
      {
        output_topic: binding.outputTopic,
        rows: rows.length,
        marked,
        failed,
        first_id: rows[0]?.id ?? null,
        last_id: rows[rows.length - 1]?.id ?? null,
        elapsed_ms: Number(process.hrtime.bigint() - started) / 1e6,
        ...(detail ? { detail } : {}),
      },
      level,
    );
  }
}

/** What a batch's delivery reports allow marking. */
interface DeliveredPrefixes {
  /** Per partition, the last id of its delivered prefix. */
  through: Map<number, number>;
  marked: number;
  /** Rows not sent, or whose delivery failed or is unknown. */
  failed: number;
  /** The first failure, for the log and the relay's error. */
  detail: string;
}

/**
 * Per partition, the delivered prefix only: a row after a failed one in the same partition is
 * published again with it, so the first copy of each version on the topic stays in outbox
 * order, and the view ignores the identical later copies. `rows`: how many were read;
 * `detail`: the enqueue refusal, if any.
 */
function deliveredPrefixes(
  rows: number,
  queued: readonly QueuedRow[],
  reports: readonly PromiseSettledResult<unknown>[],
  detail: string,
): DeliveredPrefixes {
  const blocked = new Set<number>();
  const through = new Map<number, number>();
  let marked = 0;
  let failed = rows - queued.length;
  let first = detail;
  queued.forEach((q, i) => {
    const report = reports[i];
    if (report?.status === 'fulfilled' && !blocked.has(q.row.partition)) {
      through.set(q.row.partition, q.row.id);
      marked += 1;
      return;
    }
    if (report?.status === 'rejected') {
      failed += 1;
      first ||= `outbox row ${q.row.id}: ${errorMessage(report.reason)}`;
    }
    blocked.add(q.row.partition);
  });
  return { through, marked, failed, detail: first };
}
