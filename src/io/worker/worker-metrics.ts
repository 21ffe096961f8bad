/**
 * The worker's Prometheus metrics, modelled on Kafka Connect's sink-task metrics
 * (sink-record-read/send, put-batch-time, offset commits, partition count) and counted at
 * the edges: wrappers around the store and the source observer, and the runtime's
 * inspection stream for partition ends. The machines stay pure (src/machines imports no
 * I/O); readiness and gauges read the runtime's summary when scraped.
 *
 * Counters are this process's since it started; `inspect --json` counts the namespace's
 * whole history (equal for a namespace one worker decided from the start).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { InspectionEvent } from 'xstate';
import type { ProcessOutcome, SourceConsumer, SourceObserver, State } from '../../machines/ports.js';
import type { WorkerSummary } from '../../machines/worker-summary.js';
import type { Readiness } from '../process/metrics-server.js';
import { RoleReadiness } from '../process/role-readiness.js';
import { processObservation } from './process-attempt-log.js';

/** Seconds: a batch commit is milliseconds; the top buckets catch lock waits and retries. */
const commitDurationBucketsS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/**
 * A poll must return this often to count as ready: the 20 s callback/poll budget
 * (docs/design.md#partition-lifecycle).
 */
export const workerPollBudgetMs = 20_000;

export class WorkerMetrics {
  private readonly decided: Counter<'namespace' | 'partition' | 'outcome'>;
  private readonly commitDuration: Histogram<'namespace'>;
  private readonly commitAttempts: Counter<'namespace' | 'observation'>;
  private readonly claims: Counter<'namespace' | 'result'>;
  private readonly retirements: Counter<'namespace' | 'status' | 'reason'>;
  private readonly groupCommits: Counter<'namespace' | 'result'>;
  private readonly outages: Counter<'namespace'>;
  /** Each partition's read-committed end at the latest observation. */
  private readonly ends = new Map<number, number>();
  private member = false;
  private readonly ready = new RoleReadiness(workerPollBudgetMs, (state) => {
    if (state === 'starting') return { doing: 'not yet a member of the consumer group', turn: 'poll' };
    const owned = this.summary?.().partitions.length ?? 0;
    return {
      doing: state === 'active' ? `owns ${owned} partition(s)` : 'in the group, owns no partition',
      turn: 'poll',
    };
  });
  private summary: (() => WorkerSummary) | null = null;

  constructor(
    registry: Registry,
    private readonly namespace: string,
  ) {
    const registers = [registry];
    this.decided = new Counter({
      name: 'amends_records_decided_total',
      help: 'Source records decided and committed, by partition and outcome (APPLIED, DUPLICATE, STALE, ...)',
      labelNames: ['namespace', 'partition', 'outcome'],
      registers,
    });
    this.commitDuration = new Histogram({
      name: 'amends_batch_commit_duration_seconds',
      help: "The store call of one acknowledged batch, COMMIT included (process_attempt's storage_call_elapsed_ns)",
      labelNames: ['namespace'],
      buckets: commitDurationBucketsS,
      registers,
    });
    this.commitAttempts = new Counter({
      name: 'amends_commit_attempts_total',
      help: 'Batch commit attempts by observation: acknowledged, unknown (reply lost), fenced, error',
      labelNames: ['namespace', 'observation'],
      registers,
    });
    this.claims = new Counter({
      name: 'amends_partition_claims_total',
      help: 'Partition claims (epoch increments) by result: claimed or error',
      labelNames: ['namespace', 'result'],
      registers,
    });
    this.retirements = new Counter({
      name: 'amends_partition_ends_total',
      help: 'Partition actors that ended, by status (retired, failed) and reason (revoked, fenced, ...)',
      labelNames: ['namespace', 'status', 'reason'],
      registers,
    });
    this.groupCommits = new Counter({
      name: 'amends_group_offset_commits_total',
      help: 'Frontiers committed to the consumer group for monitoring, by result: ok or failed',
      labelNames: ['namespace', 'result'],
      registers,
    });
    this.outages = new Counter({
      name: 'amends_worker_outages_total',
      help: 'Database or broker outages the worker rode through (or began to: see amends_partition_ends_total)',
      labelNames: ['namespace'],
      registers,
    });
    this.partitionGauges(registry);
  }

  /** The group began riding through an outage (ride-log.ts). */
  rode(): void {
    this.outages.inc({ namespace: this.namespace });
  }

  private partitionGauges(registry: Registry): void {
    const metrics = this;
    new Gauge({
      name: 'amends_partition_frontier',
      help: 'The next source offset to decide of each partition this worker owns (PostgreSQL frontier)',
      labelNames: ['namespace', 'partition'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [partition, frontier] of metrics.frontiers()) this.set(metrics.labels(partition), frontier);
      },
    });
    new Gauge({
      name: 'amends_partition_lag',
      help: "Records between each owned partition's frontier and its read-committed end at the latest observation",
      labelNames: ['namespace', 'partition'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [partition, frontier] of metrics.frontiers()) {
          const end = metrics.ends.get(partition);
          if (end !== undefined) this.set(metrics.labels(partition), Math.max(0, end - frontier));
        }
      },
    });
    new Gauge({
      name: 'amends_partitions_owned',
      help: 'Partitions whose actor is live in this worker',
      labelNames: ['namespace'],
      registers: [registry],
      collect() {
        this.set({ namespace: metrics.namespace }, metrics.frontiers().size);
      },
    });
  }

  private labels(partition: number): { namespace: string; partition: string } {
    return { namespace: this.namespace, partition: String(partition) };
  }

  /** Live partition actors and their latest settled frontier. */
  private frontiers(): Map<number, number> {
    const out = new Map<number, number>();
    for (const { context } of this.summary?.().partitions ?? []) {
      const c = context as { partition: number; frontier: number | null };
      if (c.frontier !== null) out.set(c.partition, c.frontier);
    }
    return out;
  }

  /** The runtime, once it exists: gauges and readiness read its summary. */
  attach(summary: () => WorkerSummary): void {
    this.summary = summary;
  }

  /** Partition ends, from the runtime's inspection stream (each PARTITION_ENDED once). */
  inspect(event: InspectionEvent): void {
    if (event.type !== '@xstate.event' || event.event.type !== 'PARTITION_ENDED') return;
    const end = (event.event as { end?: { status?: string; reason?: string } }).end;
    this.retirements.inc({
      namespace: this.namespace,
      status: end?.status ?? 'unknown',
      reason: end?.reason ?? 'unknown',
    });
  }

  /** A batch the database acknowledged, by outcome (PostgresState's onCommitted). */
  committed(partition: number, outcomes: Readonly<Partial<Record<string, number>>>): void {
    for (const [outcome, n] of Object.entries(outcomes)) {
      this.decided.inc({ ...this.labels(partition), outcome }, n ?? 0);
    }
  }

  /** The consumer is a member of the group (an assignment arrived) and polls. */
  assigned(): void {
    this.member = true;
  }

  polled(now = Date.now()): void {
    this.ready.turned(now);
  }

  groupOffsetCommitted(ok: boolean): void {
    this.groupCommits.inc({ namespace: this.namespace, result: ok ? 'ok' : 'failed' });
  }

  /** Active while it owns a partition; a hot standby while a member with none (role-readiness.ts). */
  readiness(now = Date.now()): Readiness {
    const owned = this.summary?.().partitions.length ?? 0;
    this.ready.set(this.member ? (owned > 0 ? 'active' : 'standby') : 'starting');
    return this.ready.readiness(now);
  }

  /** The store, counted: claims, commit attempts and their duration, records by outcome. */
  countingState(state: State): State {
    return {
      claim: async (partition, signal) => {
        try {
          const row = await state.claim(partition, signal);
          this.claims.inc({ namespace: this.namespace, result: 'claimed' });
          return row;
        } catch (error) {
          this.claims.inc({ namespace: this.namespace, result: 'error' });
          throw error;
        }
      },
      observe: (partition, signal) => state.observe(partition, signal),
      process: async (request, signal) => {
        // Records by outcome come from the store itself (committed): a reply lost on the way
        // (an unknown outcome) may still have committed them.
        const stopTimer = this.commitDuration.startTimer({ namespace: this.namespace });
        let outcome: ProcessOutcome;
        try {
          outcome = await state.process(request, signal);
        } catch (error) {
          this.commitAttempts.inc({ namespace: this.namespace, observation: processObservation(error) });
          throw error;
        }
        this.commitAttempts.inc({ namespace: this.namespace, observation: processObservation(outcome) });
        if (outcome.kind === 'acknowledged') stopTimer();
        return outcome;
      },
    };
  }

  /** The source observer, remembered: each observation's read-committed ends feed the lag. */
  observingSource(source: SourceObserver): SourceObserver {
    return {
      observe: async (partitions, signal) => {
        const observation = await source.observe(partitions, signal);
        if (observation.valid) {
          for (const b of observation.bounds) this.ends.set(b.partition, b.readCommittedEnd);
        }
        return observation;
      },
    };
  }

  /** The consumer, timed: readiness needs a recent poll. */
  pollingConsumer(consumer: SourceConsumer): SourceConsumer {
    return {
      connect: (signal) => consumer.connect(signal),
      poll: async (maxRecords, signal) => {
        const records = await consumer.poll(maxRecords, signal);
        this.polled();
        return records;
      },
      assign: (positions, signal) => consumer.assign(positions, signal),
      unassign: (signal) => consumer.unassign(signal),
      close: (signal) => consumer.close(signal),
    };
  }
}
