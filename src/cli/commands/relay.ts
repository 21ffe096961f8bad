import type { Manifest } from '../../domain/config.js';
import { withKafkaAdmin } from '../../io/kafka/kafka-admin.js';
import { kafkaClientCloseTimeoutMs } from '../../io/kafka/kafka-timeouts.js';
import { SourceProducer } from '../../io/kafka/source-producer.js';
import type { JsonLog } from '../../io/process/json-log.js';
import { newMetricsRegistry } from '../../io/process/metrics-server.js';
import { rideThrough, type Session } from '../../io/process/ride-through.js';
import { OutboxRelay, type RelayStats, relayFaultExitAfterPublish } from '../../io/transport/outbox-relay.js';
import { checkLiveBinding, type OutputBinding } from '../../io/transport/output-binding.js';
import { RelayMetrics } from '../../io/transport/relay-metrics.js';
import { RoleLock } from '../../io/transport/role-lock.js';
import { defineCommand } from '../command.js';
import { outageBudgetDefaultS } from '../outage-flag.js';
import { withProcessLog } from '../process-log.js';
import { ProcessScaffold, processFlags, processFlagsHelp, processSettings } from '../process-scaffold.js';

/** How long a delivery may stay unacknowledged before it counts as unknown (then republished). */
const deliveryTimeoutMs = 30_000;

export const relayCommand = defineCommand({
  name: 'relay',
  logRole: 'relay',
  summary: "publish the namespace's outbox to its output topic",
  help: `relay --manifest M [--instance-id ID] [--outage-budget-s ${outageBudgetDefaultS}]

  Publishes pending outbox envelopes to the namespace's output topic (amendsctl
  output-create) in outbox order per partition, with an idempotent producer (acks=all),
  then marks them published. Wakes on LISTEN amends_outbox, polls every second as a
  fallback. One relay per namespace is active; another waits as a hot standby and takes
  over when it dies. A lost or unknown delivery is published again (identical duplicates,
  never different content). Refuses to run when the live output topic's UUID differs from
  the binding. A database or broker outage shorter than the outage budget is ridden
  through: a fresh session takes the lock again and publishes what is still pending; past
  the budget it exits 1. SIGINT/SIGTERM drain the deliveries in flight and exit 0. Logs on
  stderr, its failure as the last line: JSON lines (one per published batch at --log-level
  debug), pretty on a terminal. Writes a heartbeat row (role relay). Needs
  AMENDS_DATABASE_URL.

  ${processFlagsHelp.sources}

  Flags
${processFlagsHelp.identity}
${processFlagsHelp.observability}
${processFlagsHelp.kafka}

  Example
    $ amends relay --manifest demo-1.manifest.json`,
  flags: processFlags,
  takesSettings: true,
  run: (cli, io) =>
    withProcessLog('relay', cli.flags, io, async (log) => {
      const settings = await processSettings(cli.flags, cli.input, io.env);
      const { id: relayId, outageBudgetMs, manifestPath, databaseUrl, brokers, manifest } = settings;
      log.bind({ namespace: manifest.config.namespace, relay: relayId });
      const stats: RelayStats = {
        state: 'standby',
        batches: 0,
        published_rows: 0,
        republish_rows: 0,
        last_published_id: null,
      };
      const registry = newMetricsRegistry();
      let metrics: RelayMetrics | undefined;
      const scaffold = await ProcessScaffold.open({
        ...{ role: 'relay', id: relayId, manifest, databaseUrl, outageBudgetMs, log, registry, env: io.env },
        migrate: settings.migrate,
        metricsAddr: cli.flags.metricsAddr,
        readiness: () => metrics?.readiness() ?? { ready: false, detail: 'starting: opening the database' },
      });
      if (scaffold === undefined) return 0;
      try {
        metrics = new RelayMetrics(registry, manifest.config.namespace, stats, scaffold.db.pool);
        const faultExitAfterPublish = io.env.AMENDS_FAULT === relayFaultExitAfterPublish;
        const run = { scaffold, relayId, manifest, databaseUrl, brokers, log, stats, metrics, outageBudgetMs };
        return await relayUntilStopped({ ...run, faultExitAfterPublish }, manifestPath);
      } finally {
        await scaffold.close();
      }
    }),
});

interface RelayRun {
  scaffold: ProcessScaffold;
  relayId: string;
  manifest: Manifest;
  databaseUrl: string;
  brokers: string;
  log: JsonLog;
  stats: RelayStats;
  metrics: RelayMetrics;
  outageBudgetMs: number;
  faultExitAfterPublish: boolean;
}

/** Binding, topic check, heartbeat, then sessions until the stop; 0 when stopped. */
async function relayUntilStopped(run: RelayRun, manifestPath: string): Promise<number> {
  const { scaffold, relayId, brokers, log, stats, faultExitAfterPublish } = run;
  const binding = await scaffold.binding(manifestPath);
  if (binding === undefined) return 0;
  const checkTopic = () =>
    withKafkaAdmin(brokers, `amends-relay-${relayId}`, (admin) => checkLiveBinding(admin, binding));
  // Started while a broker or two are down (a supervisor's restart): ride that too.
  if ((await rideThrough(scaffold.ride, () => checkTopic().then(() => true))) === undefined) return 0;
  log.write('relay_started', {
    output_topic: binding.outputTopic,
    incarnation: binding.incarnation,
    ...(faultExitAfterPublish ? { fault: relayFaultExitAfterPublish } : {}),
  });
  scaffold.startHeartbeat(() => ({ ...stats, output_topic: binding.outputTopic }));
  const ended = await rideThrough(scaffold.ride, relaySession(run, binding, checkTopic));
  stats.state = 'stopped';
  log.write('relay_stopped', { state: ended ?? 'drained', exit_code: 0, published_rows: stats.published_rows });
  return 0;
}

/**
 * Each session takes the role lock on a fresh connection and publishes what is still
 * pending: after an outage the outbox itself is the durable position.
 */
function relaySession(
  run: RelayRun,
  binding: OutputBinding,
  checkTopic: () => Promise<unknown>,
): Session<'standby' | 'drained'> {
  const { scaffold, relayId, manifest, databaseUrl, brokers, log, stats, metrics } = run;
  const namespace = manifest.config.namespace;
  let producer: SourceProducer | undefined;
  // SIGTERM drain: the producer's flush and disconnect.
  scaffold.onClose(async () => producer?.close(kafkaClientCloseTimeoutMs));
  return async (progressed) => {
    const lock = await RoleLock.open(databaseUrl, 'relay', namespace, scaffold.applicationName);
    try {
      const standby = () => {
        stats.state = 'standby';
        metrics.standby();
        log.write('relay_standby');
      };
      if (!(await lock.acquire(scaffold.stopSignal, standby, () => metrics.lockTried()))) return 'standby';
      await checkTopic();
      stats.state = 'active';
      metrics.activated();
      log.write('relay_active');
      producer ??= await SourceProducer.open({ brokers, clientId: `amends-relay-${relayId}`, deliveryTimeoutMs });
      const { faultExitAfterPublish, outageBudgetMs } = run;
      const relay = new OutboxRelay({
        ...{
          namespace,
          binding,
          lock,
          producer,
          log,
          faultExitAfterPublish,
          stats,
          outageBudgetMs,
        },
        onCycle: () => {
          progressed();
          metrics.cycled();
        },
      });
      await relay.run(scaffold.stopSignal);
      return 'drained';
    } finally {
      await lock.close();
    }
  };
}
