import type { NamespaceConfig } from '../../domain/config.js';
import { withKafkaAdmin } from '../../io/kafka/kafka-admin.js';
import { OutputConsumer } from '../../io/kafka/output-consumer.js';
import type { JsonLog } from '../../io/process/json-log.js';
import { newMetricsRegistry } from '../../io/process/metrics-server.js';
import { rideThrough, type Session } from '../../io/process/ride-through.js';
import { describeDatabaseError } from '../../io/store/postgres.js';
import type { OutputBinding } from '../../io/transport/output-binding.js';
import { checkLiveBinding } from '../../io/transport/output-binding.js';
import { OutputView } from '../../io/transport/output-view.js';
import { RoleLock } from '../../io/transport/role-lock.js';
import { ViewMetrics } from '../../io/transport/view-metrics.js';
import { readViewPartitions } from '../../io/transport/view-queries.js';
import { operationalError } from '../../kernel/amends-error.js';
import { defineCommand } from '../command.js';
import { outageBudgetDefaultS } from '../outage-flag.js';
import { withProcessLog } from '../process-log.js';
import { ProcessScaffold, processFlags, processFlagsHelp, processSettings } from '../process-scaffold.js';

/** Records per poll and per view transaction. */
const pollRecordsMax = 500;

export const viewCommand = defineCommand({
  name: 'view',
  logRole: 'view',
  summary: 'keep the latest version per (item, location, day) from the output topic',
  help: `view --manifest M [--instance-id ID] [--outage-budget-s ${outageBudgetDefaultS}]

  Consumes the namespace's output topic (read_committed) from the view's own frontier in
  PostgreSQL and keeps, per (item, location, day), the highest version (retractions
  included), moving the frontier in the same transaction. A lower version is ignored
  (stale), an identical duplicate is ignored (duplicate); the same version with different
  content is a fatal conflict: nothing is overwritten, exit 1. One view per namespace is
  active, another waits as a hot standby. Refuses to run when the live output topic's UUID
  differs from the binding. A database or broker outage shorter than the outage budget is
  ridden through: a fresh session takes the lock again and resumes from the frontiers in
  PostgreSQL; past the budget it exits 1. SIGINT/SIGTERM exit 0. Needs AMENDS_DATABASE_URL.

  ${processFlagsHelp.sources}

  Flags
${processFlagsHelp.identity}
${processFlagsHelp.kafka}
${processFlagsHelp.observability}

  Example
    $ amends view --manifest demo-1.manifest.json`,
  flags: processFlags,
  takesSettings: true,
  run: (cli, io) =>
    withProcessLog('view', cli.flags, io, async (log) => {
      const settings = await processSettings(cli.flags, cli.input, io.env);
      const { id: viewId, outageBudgetMs, manifestPath, databaseUrl, brokers, manifest } = settings;
      log.bind({ namespace: manifest.config.namespace, view: viewId });
      const registry = newMetricsRegistry();
      const metrics = new ViewMetrics(registry, manifest.config.namespace);
      const scaffold = await ProcessScaffold.open({
        ...{ role: 'view', id: viewId, manifest, databaseUrl, outageBudgetMs, log, registry, env: io.env },
        migrate: settings.migrate,
        metricsAddr: cli.flags.metricsAddr,
        readiness: () => metrics.readiness(),
      });
      if (scaffold === undefined) return 0;
      try {
        const binding = await scaffold.binding(manifestPath);
        if (binding === undefined) return 0;
        const { namespace } = manifest.config;
        const env: ViewEnv = {
          namespace,
          config: manifest.config,
          binding,
          databaseUrl,
          log,
          metrics,
        };
        return await viewUntilStopped(env, scaffold, brokers, viewId);
      } finally {
        await scaffold.close();
      }
    }),
});

/** The topic check, heartbeat, then sessions until the stop; 0 when stopped. */
async function viewUntilStopped(
  env: ViewEnv,
  scaffold: ProcessScaffold,
  brokers: string,
  viewId: string,
): Promise<number> {
  const { namespace, binding, log } = env;
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
  if ((await rideThrough(scaffold.ride, () => checkTopic().then(() => true))) === undefined) return 0;
  log.write('view_started', { output_topic: binding.outputTopic, incarnation: binding.incarnation });
  const live: LiveView = { state: 'standby', view: undefined };
  scaffold.startHeartbeat(() => viewHeartbeat(live, binding));
  // One output consumer for every session: each assigns it at the frontiers it read.
  let consumer: OutputConsumer | undefined;
  scaffold.onClose(async () => consumer?.close());
  const session: Session<'standby' | 'drained'> = async (progressed) => {
    const lock = await RoleLock.open(env.databaseUrl, 'view', namespace, scaffold.applicationName);
    try {
      const standby = () => {
        env.metrics.standby();
        log.write('view_standby');
      };
      if (!(await lock.acquire(scaffold.stopSignal, standby, () => env.metrics.lockTried()))) return 'standby';
      const view = await activateView(env, await checkTopic(), lock);
      Object.assign(live, { state: 'active', view });
      progressed(); // both answered: an outage, if any, is over
      const onClientError = (detail: string) => log.write('kafka_client', { detail }, 'warn');
      consumer ??= await OutputConsumer.open(
        brokers,
        namespace,
        binding.outputTopic,
        `amends-view-${viewId}`,
        onClientError,
      );
      env.metrics.readsEndsFrom((partition) => consumer?.cachedEnd(partition));
      await applyUntilStopped(consumer, view, lock, scaffold.stopSignal, env, progressed);
      return 'drained';
    } finally {
      await lock.close();
    }
  };
  const ended = await rideThrough(scaffold.ride, session);
  // The last heartbeat (at close) says it ended cleanly, whatever it was doing.
  live.state = 'stopped';
  log.write('view_stopped', { state: ended ?? 'drained', exit_code: 0 });
  return 0;
}

/** What the heartbeat tells of the view: its state and each partition's frontier and counts. */
interface LiveView {
  state: 'standby' | 'active' | 'stopped';
  view: OutputView | undefined;
}

function viewHeartbeat({ state, view }: LiveView, binding: OutputBinding): Record<string, unknown> {
  return {
    state,
    output_topic: binding.outputTopic,
    partitions: view
      ? [...view.positions].map(([partition, frontier]) => ({
          partition,
          state,
          frontier,
          ...view.counts.get(partition),
        }))
      : [],
  };
}

interface ViewEnv {
  namespace: string;
  config: NamespaceConfig;
  binding: OutputBinding;
  databaseUrl: string;
  log: JsonLog;
  metrics: ViewMetrics;
}

/**
 * Reads the view's frontiers from PostgreSQL (they win) and checks them against the topic's
 * ends; the view then applies on the lock's session that read them (output-view.ts says why).
 */
async function activateView(env: ViewEnv, ends: Map<number, number>, lock: RoleLock): Promise<OutputView> {
  const { namespace, binding, databaseUrl, log, metrics } = env;
  const frontiers = await readViewPartitions(lock.client, namespace).catch((error: unknown) => {
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
  const view = new OutputView(lock, env.config, frontiers);
  metrics.activated(view);
  log.write('view_active', {
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
    // One line per poll (per record when records trickle in): debug, like the worker's per
    // batch, and nothing of it is measured or built when debug is off.
    const started = env.log.enabled('debug') ? process.hrtime.bigint() : undefined;
    const counts = await view.apply(records);
    progressed();
    if (started !== undefined) {
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      env.log.write('view_applied', { records: records.length, ...counts, elapsed_ms: elapsedMs }, 'debug');
    }
  }
}
