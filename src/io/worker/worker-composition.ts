/**
 * The worker, composed (docs/design.md#worker): the PostgreSQL State, the source observer and the group
 * consumer, each behind its wrappers, bound to the actor runtime. A batch passes the ports'
 * wrappers top to bottom (`wrapPorts` builds them in this order):
 *
 *   poll     metrics.pollingConsumer    records read, last poll (readiness)      worker-metrics.ts
 *            withBatchPrefetch          hands the batch to the store at once    batch-prefetch.ts
 *            withPositionCommits        claimed frontiers → the group           group-offset-commits.ts
 *            KafkaSourceConsumer
 *   observe  metrics.observingSource    source observations counted             worker-metrics.ts
 *            KafkaSourceObserver
 *   process  withGroupOffsetCommits     acknowledged frontier → the group       group-offset-commits.ts
 *            metrics.countingState      commits, durations, outcomes            worker-metrics.ts
 *            stateHooks (optional)      injected; the showcase's fault points   (src/cli/faultable-worker.ts)
 *            withProcessAttemptLog      one process_attempt line per attempt    process-attempt-log.ts
 *            PostgresState
 *
 * The process around it (the CLI's ProcessScaffold) gives the database, the stop signal, the
 * heartbeat and the closers; it resolves with the exit code once the runtime is done.
 */
import type { InspectionEvent } from 'xstate';
import type { Manifest } from '../../domain/config.js';
import { operationalError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import type { SourceConsumer, SourceObserver, State } from '../../machines/ports.js';
import type { WorkerSummary } from '../../machines/worker-summary.js';
import { KafkaSourceConsumer } from '../kafka/kafka-source-consumer.js';
import { KafkaSourceObserver } from '../kafka/kafka-source-observer.js';
import { sourceConsumerCloseBudgetMs } from '../kafka/kafka-timeouts.js';
import { encodeWorkerBeat } from '../process/heartbeat.js';
import type { JsonLog } from '../process/json-log.js';
import { rideWatcher } from '../process/ride-log.js';
import { type RideOptions, rideThrough } from '../process/ride-through.js';
import type { Database } from '../store/postgres.js';
import { PostgresState } from '../store/postgres-state.js';
import { withBatchPrefetch } from './batch-prefetch.js';
import { CoalescedCommits, withGroupOffsetCommits, withPositionCommits } from './group-offset-commits.js';
import { withProcessAttemptLog } from './process-attempt-log.js';
import type { WorkerMetrics } from './worker-metrics.js';
import { createWorkerRuntime, type WorkerRuntime } from './worker-runtime.js';

/**
 * How long the store's warm-up may run while the group forms; past it, the first batch after a
 * claim parses its own statements (the warm-up only saves that time).
 */
const storeWarmBudgetMs = 15_000;

/** What the process around the worker provides (src/cli/process-scaffold.ts). */
export interface WorkerHost {
  readonly db: Database;
  /** PostgreSQL's application_name of the store's session. */
  readonly applicationName: string;
  readonly ride: RideOptions;
  /** Fired by SIGINT/SIGTERM (or the dashboard's quit key); its reason is the signal's name. */
  readonly stopSignal: AbortSignal;
  /** `close` runs after everything registered later (reverse order). */
  onClose(close: () => Promise<unknown>): void;
  startHeartbeat(summarize: () => object): void;
}

/** The `--tui` dashboard, fed the runtime's inspection stream and summary. */
export interface WorkerDashboardFeed {
  inspect(event: InspectionEvent): void;
  start(summary: () => WorkerSummary): void;
}

/** A State wrapped by an injected hook, and how to release what the hook holds. */
export interface HookedState {
  state: State;
  close(): void;
}

/** Wraps the logged store State below the metrics (the showcase's fault points). */
export type StateHooks = (state: State, log: JsonLog, env: NodeJS.ProcessEnv) => HookedState;

export interface WorkerOptions {
  host: WorkerHost;
  manifest: Manifest;
  workerId: string;
  brokers: string;
  log: JsonLog;
  metrics: WorkerMetrics;
  batchSize: number;
  instanceId: string | undefined;
  sessionTimeoutMs: number;
  outageBudgetMs: number;
  env: NodeJS.ProcessEnv;
  /** `--tui`: opened once store, observer and consumer are, so it closes before them. */
  openDashboard?: () => WorkerDashboardFeed;
  /** Absent for `amends worker`: the store's State is then wrapped by nothing else. */
  stateHooks?: StateHooks;
}

/** Store, observer, consumer and dashboard around the runtime; resolves with the exit code. */
export async function runWorker(options: WorkerOptions): Promise<number> {
  const { host, manifest, log, metrics, batchSize, outageBudgetMs } = options;
  const store = openStore(options);
  const observer = await rideThrough(host.ride, () => openObserver(options));
  if (observer === undefined) return 0;
  host.onClose(() => observer.close());
  // The runtime exists before the consumer can call back: callbacks only fire inside poll.
  const holder: { runtime?: WorkerRuntime } = {};
  const consumer = newConsumer(options, holder);
  const dashboard = options.openDashboard?.();
  const watchRides = rideWatcher(log, () => metrics.rode());
  const runtime = createWorkerRuntime({
    ...{ namespace: manifest.config.namespace, batchSize, outageBudgetMs },
    // The wall clock of the operation deadlines shown in the heartbeat and the dashboard.
    now: Date.now,
    ports: wrapPorts(options, { store, observer, consumer }),
    inspect: (event) => {
      metrics.inspect(event);
      watchRides(event);
      dashboard?.inspect(event);
    },
  });
  holder.runtime = runtime;
  return awaitRuntime(options, runtime, dashboard);
}

/** The wrapper stack of the header's diagram, outermost first on each port. */
function wrapPorts(
  { host, manifest, log, metrics, env, stateHooks }: WorkerOptions,
  adapters: { store: PostgresState; observer: SourceObserver; consumer: KafkaSourceConsumer },
): { state: State; source: SourceObserver; consumer: SourceConsumer } {
  const { store, observer, consumer } = adapters;
  const logged = withProcessAttemptLog(store, manifest.config.namespace, log);
  const hooked = stateHooks?.(logged, log, env);
  if (hooked !== undefined) host.onClose(async () => hooked.close());
  // Counted at the edges (worker-metrics.ts); the durable frontiers also go to the group.
  const groupCommits = new CoalescedCommits((partition, frontier) => consumer.commitFrontier(partition, frontier));
  return {
    state: withGroupOffsetCommits(metrics.countingState(hooked?.state ?? logged), groupCommits),
    source: metrics.observingSource(observer),
    consumer: metrics.pollingConsumer(withBatchPrefetch(withPositionCommits(consumer, groupCommits), store)),
  };
}

/**
 * The PostgreSQL State. While the group forms its session opens and parses its statements,
 * so the first batch after a claim does not pay for it. A failure there is only logged: the
 * claim and the batch report (and retry) their own.
 */
function openStore({ host, manifest, workerId, log, metrics }: WorkerOptions): PostgresState {
  const store = new PostgresState(host.db, manifest.config, {
    applicationName: host.applicationName,
    workerId,
    onCommitted: (partition, outcomes) => metrics.committed(partition, outcomes),
  });
  host.onClose(() => store.close());
  const warmStartedMs = Date.now();
  store.warm(AbortSignal.timeout(storeWarmBudgetMs)).then(
    ({ rounds, sent }) =>
      log.write('store_warmed', { rounds, statements_sent: sent, elapsed_ms: Date.now() - warmStartedMs }, 'debug'),
    (error: unknown) => log.write('store_warm_failed', { detail: errorMessage(error) }, 'warn'),
  );
  return store;
}

/** The source observer (docs/design.md#source-validation), or one line naming the topic and brokers. */
function openObserver({ manifest, brokers, workerId }: WorkerOptions): Promise<KafkaSourceObserver> {
  return KafkaSourceObserver.open({
    brokers,
    topic: manifest.source_topic,
    incarnation: manifest.config.source_incarnation,
    partitions: manifest.config.partitions,
    clientId: `amends-worker-${workerId}`,
  }).catch((error: unknown) => {
    throw operationalError(
      `cannot observe source topic ${manifest.source_topic} on ${brokers}: ${errorMessage(error)}`,
      error,
    );
  });
}

/** The group consumer; its rebalance callbacks reach the runtime once it exists. */
function newConsumer(options: WorkerOptions, holder: { runtime?: WorkerRuntime }): KafkaSourceConsumer {
  const { host, manifest, brokers, workerId, instanceId, sessionTimeoutMs, log, metrics } = options;
  const namespace = manifest.config.namespace;
  const consumer = new KafkaSourceConsumer({
    brokers,
    namespace,
    topic: manifest.source_topic,
    ...(instanceId === undefined ? {} : { instanceId }),
    sessionTimeoutMs,
    clientId: `amends-worker-${workerId}`,
    onAssigned: (partitions) => {
      metrics.assigned();
      holder.runtime?.partitionsAssigned(partitions);
    },
    onRevoked: (lost) => holder.runtime?.partitionsRevoked(lost),
    onClientError: (detail) => log.write('kafka_client', { detail }, 'warn'),
    onGroupOffsetCommit: ({ ok, detail }) => {
      metrics.groupOffsetCommitted(ok);
      if (!ok) log.write('group_offset_commit_failed', { namespace, detail }, 'warn');
    },
  });
  host.onClose(() => consumer.close(AbortSignal.timeout(sourceConsumerCloseBudgetMs)));
  return consumer;
}

/** Runs the runtime until it is done; a stop drains it; a failure is one line, exit 1. */
async function awaitRuntime(
  options: WorkerOptions,
  runtime: WorkerRuntime,
  dashboard?: WorkerDashboardFeed,
): Promise<number> {
  const { host, manifest, log, metrics, batchSize } = options;
  metrics.attach(() => runtime.summary());
  const stopRuntime = () => runtime.stop(String(host.stopSignal.reason ?? 'SIGTERM'));
  if (host.stopSignal.aborted) stopRuntime();
  else host.stopSignal.addEventListener('abort', stopRuntime, { once: true });
  const namespace = manifest.config.namespace;
  log.write('worker_started', { namespace, source_topic: manifest.source_topic, batch_size: batchSize });
  host.startHeartbeat(() => encodeWorkerBeat(runtime.summary(), Date.now()));
  runtime.start();
  dashboard?.start(() => runtime.summary());
  const output = await runtime.done;
  log.write('worker_stopped', { exit_code: output.exitCode, failure: output.failure });
  if (output.exitCode !== 0) {
    const f = output.failure;
    const where = f?.partition === null || f?.partition === undefined ? '' : `partition ${f.partition}: `;
    throw operationalError(`${where}${f?.detail ?? 'the worker failed'} (${f?.reason ?? 'unknown reason'})`);
  }
  return 0;
}
