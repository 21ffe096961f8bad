import type { NamespaceConfig } from '../../domain/config.js';
import { withKafkaAdmin } from '../../kafka/kafka-admin.js';
import { OutputConsumer } from '../../kafka/output-consumer.js';
import { operationalError } from '../../kernel/amends-error.js';
import { HeartbeatWriter } from '../../process/heartbeat-writer.js';
import type { JsonLog } from '../../process/json-log.js';
import { jsonLog, logLevelFrom } from '../../process/json-log.js';
import { newMetricsRegistry } from '../../process/metrics-server.js';
import { rideThrough, type Session } from '../../process/ride-through.js';
import { Database, databaseUrlFrom, describeDatabaseError } from '../../store/postgres.js';
import type { OutputBinding } from '../../transport/output-binding.js';
import { checkLiveBinding } from '../../transport/output-binding.js';
import { OutputView, readViewPartitions } from '../../transport/output-view.js';
import { RoleLock } from '../../transport/role-lock.js';
import { ViewMetrics } from '../../transport/view-metrics.js';
import { defineCommand } from '../command.js';
import { readManifestFile } from '../input-files.js';
import { kafkaEndpointFrom } from '../kafka-flags.js';
import { observabilityFlags, startMetricsEndpoint } from '../observability-flags.js';
import { outageBudgetFlag, outageBudgetFrom, outageBudgetMaxS } from '../outage-flag.js';
import { processIdentity, registeredBindingRiding, stopOnSignals } from '../process-setup.js';

/** Records per poll and per view transaction. */
const pollRecordsMax = 500;

export const viewCommand = defineCommand({
  name: 'view',
  summary: 'keep the latest version per (item, location, day) from the output topic',
  help: `view --manifest M [--instance-id ID] [--outage-budget-s 30]

  Consumes the namespace's output topic (read_committed) from the view's own frontier in
  PostgreSQL and keeps, per (item, location, day), the highest version (retractions
  included), moving the frontier in the same transaction. A lower version is ignored
  (stale), an identical duplicate is ignored (duplicate); the same version with different
  content is a fatal conflict: nothing is overwritten, exit 1. One view per namespace is
  active, another waits as a hot standby. Refuses to run when the live output topic's UUID
  differs from the binding. A database or broker outage shorter than the outage budget is
  ridden through: a fresh session takes the lock again and resumes from the frontiers in
  PostgreSQL; past the budget it exits 1. SIGINT/SIGTERM exit 0. Needs AMENDS_DATABASE_URL.

  Flags
    --manifest M      the namespace's manifest (required)
    --instance-id ID  the heartbeat row's id (default: hostname-pid)
    --outage-budget-s S
                      how long an outage may last before exit 1 (default 30); 0: exit at once
    --brokers LIST    bootstrap servers (default: $AMENDS_BROKERS or 127.0.0.1:19092)
    --kafka-config FILE
                      librdkafka settings for every Kafka client (default: $AMENDS_KAFKA_CONFIG)
    --metrics-addr HOST:PORT
                      serve /metrics, /healthz, /readyz (default: $AMENDS_METRICS_ADDR; off)
    --log-level LEVEL debug, info, warn or error (default: $AMENDS_LOG_LEVEL or info)

  Example
    $ amends view --manifest demo-1.manifest.json`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    instanceId: { type: 'string' },
    ...outageBudgetFlag,
    brokers: { type: 'string' },
    kafkaConfig: { type: 'string' },
    ...observabilityFlags,
  },
  async run(cli, io) {
    const viewId = processIdentity(cli.flags.instanceId, cli.input);
    const outageBudgetMs = outageBudgetFrom(cli.flags.outageBudgetS, outageBudgetMaxS);
    const manifestPath = cli.flags.manifest as string;
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    const manifest = await readManifestFile(manifestPath);
    const namespace = manifest.config.namespace;
    const log = jsonLog(io.stderr, { view: viewId }, logLevelFrom(cli.flags.logLevel, io.env));
    const applicationName = `amends view ${viewId}`;
    const registry = newMetricsRegistry();
    const metrics = new ViewMetrics(registry, namespace);
    const server = await startMetricsEndpoint(cli.flags.metricsAddr, io.env, registry, () => metrics.readiness(), log);

    const stop = stopOnSignals(log);
    const ride = { budgetMs: outageBudgetMs, signal: stop.signal, log, role: 'view' };
    // Started while the database restarts (a supervisor's restart): wait for it within the budget.
    const db = await rideThrough(ride, () => Database.open(databaseUrl, applicationName));
    if (db === undefined) return 0;
    const closers: (() => Promise<unknown>)[] = [() => db.close()];
    if (server !== undefined) closers.unshift(() => server.close());
    let state = 'standby';
    let view: OutputView | undefined;
    let heartbeat: HeartbeatWriter | undefined;
    try {
      const binding = await registeredBindingRiding(ride, db, manifest, manifestPath, databaseUrl);
      if (binding === undefined) return 0;
      const checkTopic = () =>
        withKafkaAdmin(brokers, `amends-view-${viewId}`, async (admin) => {
          await checkLiveBinding(admin, binding);
          return admin.listOffsets(
            binding.outputTopic,
            Array.from({ length: binding.partitions }, (_, p) => p),
            'read-committed-end',
          );
        });
      // Started while a broker or two are down (a supervisor's restart): ride that too.
      if ((await rideThrough(ride, () => checkTopic().then(() => true))) === undefined) return 0;
      log.write('view_started', { namespace, output_topic: binding.outputTopic, incarnation: binding.incarnation });
      heartbeat = new HeartbeatWriter(
        db.pool,
        { namespace, workerId: viewId, role: 'view', pid: process.pid },
        () => ({
          state,
          output_topic: binding.outputTopic,
          partitions: view
            ? [...view.positions].map(([partition, frontier]) => ({
                partition,
                state,
                frontier,
                ...view?.counts.get(partition),
              }))
            : [],
        }),
        log,
      );
      heartbeat.start();

      // One output consumer for every session: each assigns it at the frontiers it read.
      let consumer: OutputConsumer | undefined;
      closers.push(async () => consumer?.close());
      const env: ViewEnv = { namespace, config: manifest.config, binding, databaseUrl, db, log, metrics };
      const session: Session<'standby' | 'drained'> = async (progressed) => {
        const lock = await RoleLock.open(databaseUrl, 'view', namespace, applicationName);
        try {
          if (!(await lock.acquire(stop.signal, () => log.write('view_standby', { namespace })))) return 'standby';
          view = await activateView(env, await checkTopic());
          state = 'active';
          progressed(); // both answered: an outage, if any, is over
          consumer ??= await OutputConsumer.open(
            brokers,
            namespace,
            binding.outputTopic,
            `amends-view-${viewId}`,
            (detail) => log.write('kafka_client', { detail }, 'warn'),
          );
          await applyUntilStopped(consumer, view, lock, stop.signal, env, progressed);
          return 'drained';
        } finally {
          await lock.close();
        }
      };
      const ended = await rideThrough(ride, session);
      // The last heartbeat (in finally) says it ended cleanly, whatever it was doing.
      state = 'stopped';
      log.write('view_stopped', { state: ended ?? 'drained', exit_code: 0 });
      return 0;
    } finally {
      stop.detach();
      await heartbeat?.stop();
      for (const close of closers.reverse()) await close().catch(() => {});
    }
  },
});

interface ViewEnv {
  namespace: string;
  config: NamespaceConfig;
  binding: OutputBinding;
  databaseUrl: string;
  db: Database;
  log: JsonLog;
  metrics: ViewMetrics;
}

/** Reads the view's frontiers from PostgreSQL (they win) and checks them against the topic's ends. */
async function activateView(env: ViewEnv, ends: Map<number, number>): Promise<OutputView> {
  const { namespace, binding, databaseUrl, db, log, metrics } = env;
  const frontiers = await readViewPartitions(db.pool, namespace).catch((error: unknown) => {
    throw describeDatabaseError(error, databaseUrl, `reading the view frontiers of namespace ${namespace}`);
  });
  if (frontiers.length !== binding.partitions) {
    throw operationalError(
      `namespace ${namespace} has ${frontiers.length} view partition rows for ${binding.partitions} output partitions: the store is inconsistent`,
    );
  }
  for (const f of frontiers) {
    const end = ends.get(f.partition) ?? 0;
    // PostgreSQL wins, but a frontier beyond the topic's end means history is missing.
    if (f.frontier > end) {
      throw operationalError(
        `the view frontier of partition ${f.partition} is ${f.frontier}, beyond the end ${end} of output topic ${binding.outputTopic}: records the view applied are gone from the topic`,
      );
    }
  }
  const view = new OutputView(db, env.config, frontiers);
  metrics.activated(view);
  log.write('view_active', {
    namespace,
    frontiers: frontiers.map((f) => ({ partition: f.partition, frontier: f.frontier })),
  });
  return view;
}

/** Polls and applies from the view's positions until the stop signal; each applied poll is progress. */
async function applyUntilStopped(
  consumer: OutputConsumer,
  view: OutputView,
  lock: RoleLock,
  signal: AbortSignal,
  env: ViewEnv,
  progressed: () => void,
): Promise<void> {
  consumer.assign(view.positions);
  while (!signal.aborted) {
    lock.throwIfLost();
    const records = await consumer.poll(pollRecordsMax);
    env.metrics.polled();
    if (records.length === 0) continue;
    const started = process.hrtime.bigint();
    const counts = await view.apply(records);
    progressed();
    env.log.write('view_applied', {
      records: records.length,
      ...counts,
      elapsed_ms: Number(process.hrtime.bigint() - started) / 1e6,
    });
  }
}
