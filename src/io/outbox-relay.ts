/**
 * The outbox relay (transport.md, Relay): publishes a namespace's pending outbox envelopes
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
 * version, never two contents for one (transport.md). The idempotent producer keeps its
 * own retries from duplicating or reordering within a partition.
 *
 * Only the holder of the relay's role lock runs this (role-lock.ts): two relays never
 * interleave. The lock's session also carries the LISTEN.
 *
 * The producer is source-producer.ts's: idempotent, acks=all, explicit partition, a delivery
 * report per record (dr_cb + setPollInterval), real flush/disconnect timeouts
 * (library-notes.md). Publishing an envelope needs nothing more than publishing a source
 * record does.
 */
import { operationalError } from '../domain/amends-error.js';
import { outboxChannel } from '../store/postgres-state.js';
import { assertInvariant } from './invariant.js';
import type { JsonLog } from './json-log.js';
import { namespaceId } from './namespace-registry.js';
import type { OutputBinding } from './output-binding.js';
import type { Queryable } from './postgres.js';
import type { RoleLock } from './role-lock.js';
import { int8ToSafeInteger } from './safe-integer.js';
import { type Delivery, PublicationError, type QueuedRecord, type SourceProducer } from './source-producer.js';

/** Rows per batch: bounded memory and one UPDATE per batch. */
export const relayBatchRowsMax = 1_000;
/**
 * A namespace's unpublished envelopes in outbox order, $1 its id (namespace-registry.ts).
 * `id + 0` is the order of the partial index `outbox_pending` and of no other (migration
 * 0004): the read is a range scan that stops at the limit, never a primary key walk past
 * other namespaces' and published rows.
 */
export const pendingOutboxRowsSql = `SELECT id, partition, record_key, record_value FROM outbox
  WHERE ns = $1 AND published_at IS NULL ORDER BY id + 0 LIMIT $2`;
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
  pool: Queryable;
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
    const nsId = await namespaceId(this.o.pool, namespace);
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
    const { pool, namespace, binding, producer, log, stats } = this.o;
    const started = process.hrtime.bigint();
    const read = await pool.query<{ id: string; partition: number; record_key: Buffer; record_value: Buffer }>(
      pendingOutboxRowsSql,
      [nsId, relayBatchRowsMax],
    );
    if (read.rows.length === 0) return { rows: 0, failed: 0, detail: '' };
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
    // Enqueue strictly in outbox order; the first record librdkafka refuses stops the batch
    // (what follows would otherwise overtake it in its partition).
    const queued: { row: OutboxRow; record: QueuedRecord }[] = [];
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
    const reports = await Promise.allSettled(queued.map((q) => q.record.delivered));
    if (this.o.faultExitAfterPublish && reports.some((r) => r.status === 'fulfilled')) {
      log.write('fault_injected', { fault: relayFaultExitAfterPublish, acknowledged_rows: reports.length });
      process.kill(process.pid, 'SIGKILL');
    }
    // Per partition, mark the delivered prefix only: a row after a failed one in the same
    // partition is published again with it, so the first copy of each version on the topic
    // stays in outbox order, and the view ignores the identical later copies.
    const blocked = new Set<number>();
    const marked: number[] = [];
    const delivered: Delivery[] = [];
    let failed = rows.length - queued.length;
    queued.forEach((q, i) => {
      const report = reports[i];
      if (report?.status === 'fulfilled' && !blocked.has(q.row.partition)) {
        marked.push(q.row.id);
        delivered.push(report.value);
        return;
      }
      if (report?.status === 'rejected') {
        failed += 1;
        detail ||= `outbox row ${q.row.id}: ${(report.reason as Error).message}`;
      }
      blocked.add(q.row.partition);
    });
    if (marked.length > 0) {
      const update = await pool.query(
        `UPDATE outbox SET published_at = clock_timestamp()
          WHERE ns = $1 AND id = ANY($2::bigint[]) AND published_at IS NULL`,
        [nsId, marked],
      );
      // Fewer rows means someone else marked them: only another active relay would, and the
      // role lock excludes that. Logged, not fatal: the records were published either way.
      if (update.rowCount !== marked.length) {
        log.write('relay_mark_mismatch', { expected: marked.length, updated: update.rowCount });
      }
    }
    stats.batches += 1;
    stats.published_rows += marked.length;
    stats.republish_rows += rows.length - marked.length;
    stats.last_published_id = marked.length > 0 ? (marked[marked.length - 1] ?? null) : stats.last_published_id;
    log.write('relay_published', {
      namespace,
      output_topic: binding.outputTopic,
      rows: rows.length,
      marked: marked.length,
      failed,
      first_id: rows[0]?.id ?? null,
      last_id: rows[rows.length - 1]?.id ?? null,
      elapsed_ms: Number(process.hrtime.bigint() - started) / 1e6,
      ...(detail ? { detail } : {}),
    });
    return { rows: rows.length, failed: rows.length - marked.length, detail };
  }
}
