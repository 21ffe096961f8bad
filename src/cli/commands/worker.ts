/**
 * `amends worker --manifest M [--batch-size N] [--instance-id ID]` (also `amends --manifest M`):
 * the source worker (docs/design.md#worker). Wires the real adapters into the actor runtime:
 *
 *   PostgreSQL State ─┐
 *   source observer ──┼─▶ createWorkerRuntime (group actor + one partition actor each)
 *   source consumer ──┘        ▲ rebalance callbacks (served inside poll) and signals
 *
 * SIGINT/SIGTERM cancel and join all work before the broker client closes: exit 0. A fatal
 * or exhausted operation exits 1 with a one-line diagnostic (the runtime's failure).
 */
import { mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Manifest } from '../../domain/config.js';
import { CoalescedCommits, withGroupOffsetCommits, withPositionCommits } from '../../io/kafka/group-offset-commits.js';
import { defaultBrokers } from '../../io/kafka/kafka-connection.js';
import { defaultSessionTimeoutMs, KafkaSourceConsumer } from '../../io/kafka/kafka-source-consumer.js';
import { KafkaSourceObserver } from '../../io/kafka/kafka-source-observer.js';
import { operationalError, usageError } from '../../kernel/amends-error.js';
import { defaultBatchSize } from '../../machines/limits.js';
import { createWorkerRuntime, type WorkerRuntime } from '../../machines/worker-runtime.js';
import { encodeWorkerBeat } from '../../io/process/heartbeat.js';
import { type JsonLog, jsonLog, logLevelFrom } from '../../io/process/json-log.js';
import { newMetricsRegistry } from '../../io/process/metrics-server.js';
import { withProcessAttemptLog } from '../../io/process/process-attempt-log.js';
import { rideWatcher } from '../../io/process/ride-log.js';
import { rideThrough } from '../../io/process/ride-through.js';
import { WorkerMetrics } from '../../io/process/worker-metrics.js';
import { withWorkerFaultHooks } from '../../showcase/worker-fault-hooks.js';
import { withBatchPrefetch } from '../../io/store/batch-prefetch.js';
import { PostgresState } from '../../io/store/postgres-state.js';
import { defineCommand } from '../command.js';
import { capHeapGrowth } from '../heap-growth.js';
import { outageBudgetDefaultS, outageBudgetMaxS } from '../outage-flag.js';
import { ProcessScaffold, processFlags, processSettings } from '../process-scaffold.js';
import { startWorkerDashboard, type WorkerDashboard } from './tui.js';

const batchSizeMax = 10_000;
/** The flag refuses a session timeout below 1 s; its default is the broker's minimum (6 s). */
const sessionTimeoutMinMs = 1_000;

/** Time the consumer gets to leave the group after the runtime is done (it usually already has). */
const closeTimeoutMs = 15_000;

/**
 * A batch's statement parameters are strings of megabytes (the raw bytes as bytea literals),
 * which V8 allocates in the old generation's large-object space, so they stayed until a full
 * collection of a heap grown for them: at batch 5000 two workers peaked at 259–296 MB; with the
 * growth capped at 60 % at 182–202 MB, at 2000 at 160–170 MB instead of 215–238, records/s
 * within the runs' spread (docs/choices.md).
 */
export const workerHeapGrowingPercent = 60;

export const workerCommand = defineCommand({
  name: 'worker',
  summary: 'decide source records exactly once into PostgreSQL',
  help: `worker --manifest M [--batch-size N] [--instance-id ID] [--outage-budget-s ${outageBudgetDefaultS}] [--tui]

  Joins the namespace's consumer group (amends.<namespace>.source) and decides every
  record of its assigned partitions exactly once: each poll's records are decided in one
  PostgreSQL transaction fenced by the partition's epoch and frontier. Offsets come from
  PostgreSQL only. Logs one JSON line per store attempt on stderr and writes a heartbeat
  row about once a second. SIGINT/SIGTERM drain and exit 0. A database or broker outage
  (exhausted retries, an unresolved commit outcome, an unobservable source) suspends
  processing: the worker stays in the group, probes both, and claims its partitions afresh
  once they answer; past the outage budget it exits 1, as it does at once for an invalid
  source. Needs AMENDS_DATABASE_URL.

  Flags
    --manifest M               the manifest printed by source-create (required)
    --batch-size N             records per poll and per transaction (default ${defaultBatchSize})
    --instance-id ID           static group membership (KIP-345): a restarted worker with
                               the same id gets its partitions back without a rebalance
    --session-timeout-ms N     group session timeout (default ${defaultSessionTimeoutMs}, the broker minimum)
    --outage-budget-s S        how long an outage may last before exit 1 (default ${outageBudgetDefaultS}, at most
                               ${outageBudgetMaxS}: a riding worker does not poll, and budget + 20 s
                               stays below max.poll.interval.ms); 0: exit at the first one
    --brokers LIST             bootstrap servers (default: $AMENDS_BROKERS or ${defaultBrokers})
    --kafka-config FILE        librdkafka settings for every Kafka client (default: $AMENDS_KAFKA_CONFIG)
    --metrics-addr HOST:PORT   serve /metrics, /healthz, /readyz (default: $AMENDS_METRICS_ADDR; off)
    --log-level LEVEL          debug, info, warn or error (default: $AMENDS_LOG_LEVEL or info)
    --tui                      draw the dashboard (amends tui) of this worker and its namespace;
                               the JSON log lines then go to artifacts/logs/worker-<id>.jsonl

  Example
    $ amends worker --manifest manifest.json --batch-size 500 --instance-id worker-a`,
  flags: {
    ...processFlags,
    batchSize: { type: 'number', default: defaultBatchSize },
    sessionTimeoutMs: { type: 'number', default: defaultSessionTimeoutMs },
    tui: { type: 'boolean', default: false },
  },
  async run(cli, io) {
    capHeapGrowth(workerHeapGrowingPercent);
    const { batchSize, instanceId, sessionTimeoutMs } = cli.flags;
    if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > batchSizeMax) {
      throw usageError(`--batch-size must be an integer in [1, ${batchSizeMax}]`);
    }
    if (!Number.isSafeInteger(sessionTimeoutMs) || sessionTimeoutMs < sessionTimeoutMinMs) {
      throw usageError(`--session-timeout-ms must be an integer of at least ${sessionTimeoutMinMs}`);
    }
    const settings = await processSettings(cli.flags, cli.input, io.env);
    const { id: workerId, outageBudgetMs, databaseUrl, brokers, manifest } = settings;
    // --tui: the screen is the dashboard's, so the JSON lines go to a file (named in its header).
    const logFile = cli.flags.tui ? join('artifacts', 'logs', `worker-${workerId}.jsonl`) : null;
    const logLevel = logLevelFrom(cli.flags.logLevel, io.env);
    const log = jsonLog(logFile === null ? io.stderr : appendOnlyFile(logFile), { worker: workerId }, logLevel);
    const registry = newMetricsRegistry();
    const metrics = new WorkerMetrics(registry, manifest.config.namespace);
    // Started while the database restarts (a supervisor's restart): the scaffold waits for it
    // within the outage budget, as the running worker would.
    const scaffold = await ProcessScaffold.open({
      ...{ role: 'worker', id: workerId, manifest, databaseUrl, outageBudgetMs, log, registry, env: io.env },
      metricsAddr: cli.flags.metricsAddr,
      readiness: () => metrics.readiness(),
    });
    if (scaffold === undefined) return 0;
    try {
      const run = { scaffold, manifest, workerId, databaseUrl, brokers, log, metrics, logFile };
      return await runWorker({ ...run, batchSize, instanceId, sessionTimeoutMs, outageBudgetMs, env: io.env });
    } finally {
      await scaffold.close();
    }
  },
});

interface WorkerRun {
  scaffold: ProcessScaffold;
  manifest: Manifest;
  workerId: string;
  databaseUrl: string;
  brokers: string;
  log: JsonLog;
  metrics: WorkerMetrics;
  /** --tui: where the log lines go while the dashboard has the screen. */
  logFile: string | null;
  batchSize: number;
  instanceId: string | undefined;
  sessionTimeoutMs: number;
  outageBudgetMs: number;
  env: NodeJS.ProcessEnv;
}

/** Store, observer, consumer and dashboard around the runtime; resolves with the exit code. */
async function runWorker(run: WorkerRun): Promise<number> {
  const { scaffold, manifest, log, metrics, batchSize, outageBudgetMs } = run;
  const store = openStore(run);
  const observer = await rideThrough(scaffold.ride, () => openObserver(run));
  if (observer === undefined) return 0;
  scaffold.onClose(() => observer.close());
  // The runtime exists before the consumer can call back: callbacks only fire inside poll.
  const holder: { runtime?: WorkerRuntime } = {};
  const consumer = newConsumer(run, holder);
  const dashboard = run.logFile === null ? undefined : openDashboard(run, run.logFile);
  // Owned fault points (showcase and tests only): nothing is read without AMENDS_FAULT_CONTROL.
  const namespace = manifest.config.namespace;
  const faults = withWorkerFaultHooks(withProcessAttemptLog(store, namespace, log), run.env, log);
  scaffold.onClose(async () => faults.close());
  // Counted at the edges (worker-metrics.ts); the durable frontiers also go to the group.
  const groupCommits = new CoalescedCommits((partition, frontier) => consumer.commitFrontier(partition, frontier));
  const state = withGroupOffsetCommits(metrics.countingState(faults.state), groupCommits);
  const watchRides = rideWatcher(log, () => metrics.rode());
  const runtime = createWorkerRuntime({
    ...{ namespace, batchSize, outageBudgetMs },
    // The wall clock of the operation deadlines shown in the heartbeat and the dashboard.
    now: Date.now,
    ports: {
      state,
      source: metrics.observingSource(observer),
      consumer: metrics.pollingConsumer(withBatchPrefetch(withPositionCommits(consumer, groupCommits), store)),
    },
    inspect: (event) => {
      metrics.inspect(event);
      watchRides(event);
      dashboard?.inspect(event);
    },
  });
  holder.runtime = runtime;
  return awaitRuntime(run, runtime, dashboard);
}

/**
 * The PostgreSQL State. While the group forms its session opens and parses its statements,
 * so the first batch after a claim does not pay for it. A failure there is only logged: the
 * claim and the batch report (and retry) their own.
 */
function openStore({ scaffold, manifest, workerId, log, metrics }: WorkerRun): PostgresState {
  const store = new PostgresState(scaffold.db, manifest.config, {
    applicationName: scaffold.applicationName,
    workerId,
    onCommitted: (partition, outcomes) => metrics.committed(partition, outcomes),
  });
  scaffold.onClose(() => store.close());
  const warmStartedMs = Date.now();
  store.warm(AbortSignal.timeout(closeTimeoutMs)).then(
    ({ rounds, sent }) =>
      log.write('store_warmed', { rounds, statements_sent: sent, elapsed_ms: Date.now() - warmStartedMs }, 'debug'),
    (error: unknown) => log.write('store_warm_failed', { detail: (error as Error).message }, 'warn'),
  );
  return store;
}

/** The source observer (docs/design.md#source-validation), or one line naming the topic and brokers. */
function openObserver({ manifest, brokers, workerId }: WorkerRun): Promise<KafkaSourceObserver> {
  return KafkaSourceObserver.open({
    brokers,
    topic: manifest.source_topic,
    incarnation: manifest.config.source_incarnation,
    partitions: manifest.config.partitions,
    clientId: `amends-worker-${workerId}`,
  }).catch((error: unknown) => {
    throw operationalError(
      `cannot observe source topic ${manifest.source_topic} on ${brokers}: ${(error as Error).message}`,
      error,
    );
  });
}

/** The group consumer; its rebalance callbacks reach the runtime once it exists. */
function newConsumer(run: WorkerRun, holder: { runtime?: WorkerRuntime }): KafkaSourceConsumer {
  const { scaffold, manifest, brokers, workerId, instanceId, sessionTimeoutMs, log, metrics } = run;
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
  scaffold.onClose(() => consumer.close(AbortSignal.timeout(closeTimeoutMs)));
  return consumer;
}

/** `--tui`: this worker's dashboard; q or Ctrl-C asks the worker to drain. */
function openDashboard(run: WorkerRun, logFile: string): WorkerDashboard {
  const { scaffold, databaseUrl, brokers, manifest, workerId } = run;
  const onQuit = () => scaffold.requestStop('SIGINT');
  const dashboard = startWorkerDashboard({ databaseUrl, brokers, manifest, workerId, logFile, onQuit });
  scaffold.onClose(() => dashboard.close());
  return dashboard;
}

/** Runs the runtime until it is done; a stop drains it; a failure is one line, exit 1. */
async function awaitRuntime(run: WorkerRun, runtime: WorkerRuntime, dashboard?: WorkerDashboard): Promise<number> {
  const { scaffold, manifest, log, metrics, batchSize } = run;
  metrics.attach(() => runtime.summary());
  const stopRuntime = () => runtime.stop(String(scaffold.stopSignal.reason ?? 'SIGTERM'));
  if (scaffold.stopSignal.aborted) stopRuntime();
  else scaffold.stopSignal.addEventListener('abort', stopRuntime, { once: true });
  const namespace = manifest.config.namespace;
  log.write('worker_started', { namespace, source_topic: manifest.source_topic, batch_size: batchSize });
  scaffold.startHeartbeat(() => encodeWorkerBeat(runtime.summary(), Date.now()));
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

/** A log file written one whole line per synchronous write, like stderr (json-log.ts). */
function appendOnlyFile(path: string): NodeJS.WritableStream {
  mkdirSync(join(path, '..'), { recursive: true });
  const fd = openSync(path, 'a');
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      writeSync(fd, chunk);
      done();
    },
  });
}
