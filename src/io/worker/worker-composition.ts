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
import { assertInvariant } from '../../kernel/invariant.js';
import type { GroupOutput } from '../../machines/group-machine.js';
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
  /** `onServerChanged`: another PostgreSQL server answers than before (heartbeat-writer.ts). */
  startHeartbeat(summarize: () => object, onServerChanged: (detail: string) => void): void;
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

/**
 * Store, observer, consumer and dashboard around the runtime; resolves with the exit code.
 *
 * A consumer the group fenced as a static member is dead for good (librdkafka's fatal error):
 * the coordinator can replay an earlier join of this very client after a failover (librdkafka
 * #3437, KAFKA-20985). The worker then does what a restart would do, in-process: a new consumer
 * and a new group actor over the same store, at most once per outage budget (twice within it
 * means another live worker has the same --instance-id, and the process exits 1).
 */
export async function runWorker(options: WorkerOptions): Promise<number> {
  const { host, log } = options;
  const store = openStore(options);
  const observer = await rideThrough(host.ride, () => openObserver(options));
  if (observer === undefined) return 0;
  host.onClose(() => observer.close());
  const current: { runtime?: WorkerRuntime; consumer?: KafkaSourceConsumer } = {};
  // One closer for whichever consumer is current (a replaced one was closed by its group), so
  // rejoins add nothing; registered before the dashboard opens, so the dashboard closes first.
  host.onClose(async () => current.consumer?.close(AbortSignal.timeout(sourceConsumerCloseBudgetMs)));
  const ports = wrapFixedPorts(options, store, observer, current);
  const dashboard = options.openDashboard?.();
  const inspect = inspector(options, dashboard);
  let rejoinedAtMs = Number.NEGATIVE_INFINITY;
  for (;;) {
    // The runtime exists before the consumer can call back: callbacks only fire inside poll.
    const holder: { runtime?: WorkerRuntime } = {};
    const consumer = newConsumer(options, holder);
    current.consumer = consumer;
    const runtime = newRuntime(options, { ...ports, consumer: ports.wrapConsumer(consumer) }, inspect);
    holder.runtime = runtime;
    current.runtime = runtime;
    if (rejoinedAtMs === Number.NEGATIVE_INFINITY) announce(options, current, dashboard);
    if (host.stopSignal.aborted) runtime.stop(String(host.stopSignal.reason ?? 'SIGTERM'));
    runtime.start();
    const output = await runtime.done;
    // --outage-budget-s 0 asks for exit at the first failure, and a second fence within the
    // budget is another live worker with this --instance-id: a rejoin would only fence it back.
    const withinBudget = Date.now() - rejoinedAtMs < options.outageBudgetMs;
    const rejoin = consumer.fencedAsStaticMember && !host.stopSignal.aborted && options.outageBudgetMs > 0;
    if (!rejoin) return finish(options, output);
    if (withinBudget) return finish(options, fencedAgain(options, output));
    rejoinedAtMs = Date.now();
    log.write('worker_rejoining', { detail: output.failure?.detail ?? null }, 'warn');
  }
}

/** Every event to the metrics, the ride log and the dashboard, for each runtime in turn. */
function inspector(options: WorkerOptions, dashboard: WorkerDashboardFeed | undefined) {
  const { log, metrics } = options;
  const watchRides = rideWatcher(log, () => metrics.rode());
  return (event: InspectionEvent) => {
    metrics.inspect(event);
    watchRides(event);
    dashboard?.inspect(event);
  };
}

function newRuntime(
  options: WorkerOptions,
  ports: { state: State; source: SourceObserver; consumer: SourceConsumer },
  inspect: (event: InspectionEvent) => void,
): WorkerRuntime {
  const { manifest, batchSize, outageBudgetMs } = options;
  return createWorkerRuntime({
    ...{ namespace: manifest.config.namespace, batchSize, outageBudgetMs },
    // The wall clock of the operation deadlines shown in the heartbeat and the dashboard.
    now: Date.now,
    ports,
    inspect,
  });
}

/**
 * The wrapper stack of the header's diagram, outermost first on each port: the store's and the
 * observer's once, the consumer's for each consumer (`wrapConsumer`).
 */
function wrapFixedPorts(
  { host, log, metrics, env, stateHooks }: WorkerOptions,
  store: PostgresState,
  observer: SourceObserver,
  current: { consumer?: KafkaSourceConsumer },
): { state: State; source: SourceObserver; wrapConsumer: (consumer: KafkaSourceConsumer) => SourceConsumer } {
  const logged = withProcessAttemptLog(store, log);
  const hooked = stateHooks?.(logged, log, env);
  if (hooked !== undefined) host.onClose(async () => hooked.close());
  // Counted at the edges (worker-metrics.ts); the durable frontiers also go to the group.
  const groupCommits = new CoalescedCommits(async (partition, frontier) =>
    current.consumer?.commitFrontier(partition, frontier),
  );
  return {
    state: withGroupOffsetCommits(metrics.countingState(hooked?.state ?? logged), groupCommits),
    source: metrics.observingSource(observer),
    wrapConsumer: (consumer) =>
      metrics.pollingConsumer(withBatchPrefetch(withPositionCommits(consumer, groupCommits), store)),
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
  const { manifest, brokers, workerId, instanceId, sessionTimeoutMs, log, metrics } = options;
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
      if (!ok) log.write('group_offset_commit_failed', { detail }, 'warn');
    },
  });
  return consumer;
}

/** The summary sources and the stop signal follow whichever runtime is current; one started line. */
function announce(
  options: WorkerOptions,
  current: { runtime?: WorkerRuntime },
  dashboard: WorkerDashboardFeed | undefined,
): void {
  const { host, manifest, log, metrics, batchSize } = options;
  const summary = (): WorkerSummary => {
    assertInvariant(current.runtime !== undefined, 'a summary asked for before the first runtime');
    return current.runtime.summary();
  };
  metrics.attach(summary);
  host.stopSignal.addEventListener('abort', () => current.runtime?.stop(String(host.stopSignal.reason ?? 'SIGTERM')), {
    once: true,
  });
  log.write('worker_started', { source_topic: manifest.source_topic, batch_size: batchSize });
  // The database may have gone back in time: claim afresh (docs/design.md#store).
  host.startHeartbeat(
    () => encodeWorkerBeat(summary(), Date.now()),
    (detail) => current.runtime?.databaseChanged(detail),
  );
  dashboard?.start(summary);
}

/** The last runtime's end: a stop is exit 0; a failure is one line, exit 1. */
/** A second fence within the budget is no failover replay: another process holds the id. */
function fencedAgain({ instanceId }: WorkerOptions, output: GroupOutput): GroupOutput {
  const detail = `fenced again as static member ${instanceId} within the outage budget: another process joined the consumer group with --instance-id ${instanceId} and took this one's place; give each worker its own --instance-id`;
  return output.failure === null ? output : { ...output, failure: { ...output.failure, detail } };
}

function finish(options: WorkerOptions, output: GroupOutput): number {
  const { log } = options;
  log.write('worker_stopped', { exit_code: output.exitCode, failure: output.failure });
  if (output.exitCode !== 0) {
    const f = output.failure;
    const where = f?.partition === null || f?.partition === undefined ? '' : `partition ${f.partition}: `;
    throw operationalError(`${where}${f?.detail ?? 'the worker failed'} (${f?.reason ?? 'unknown reason'})`);
  }
  return 0;
}
