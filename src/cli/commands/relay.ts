import { withKafkaAdmin } from '../../kafka/kafka-admin.js';
import { SourceProducer } from '../../kafka/source-producer.js';
import { HeartbeatWriter } from '../../process/heartbeat-writer.js';
import { jsonLog, logLevelFrom } from '../../process/json-log.js';
import { newMetricsRegistry } from '../../process/metrics-server.js';
import { rideThrough, type Session } from '../../process/ride-through.js';
import { Database, databaseUrlFrom } from '../../store/postgres.js';
import { OutboxRelay, type RelayStats, relayFaultExitAfterPublish } from '../../transport/outbox-relay.js';
import { checkLiveBinding } from '../../transport/output-binding.js';
import { RelayMetrics } from '../../transport/relay-metrics.js';
import { RoleLock } from '../../transport/role-lock.js';
import { defineCommand } from '../command.js';
import { readManifestFile } from '../input-files.js';
import { kafkaEndpointFrom } from '../kafka-flags.js';
import { observabilityFlags, startMetricsEndpoint } from '../observability-flags.js';
import { outageBudgetFlag, outageBudgetFrom, outageBudgetMaxS } from '../outage-flag.js';
import { processIdentity, registeredBindingRiding, stopOnSignals } from '../process-setup.js';

/** How long a delivery may stay unacknowledged before it counts as unknown (then republished). */
const deliveryTimeoutMs = 30_000;
/** SIGTERM drain: the producer's flush and disconnect. */
const producerCloseTimeoutMs = 10_000;

export const relayCommand = defineCommand({
  name: 'relay',
  summary: "publish the namespace's outbox to its output topic",
  help: `relay --manifest M [--instance-id ID] [--outage-budget-s 30]

  Publishes pending outbox envelopes to the namespace's output topic (amendsctl
  output-create) in outbox order per partition, with an idempotent producer (acks=all),
  then marks them published. Wakes on LISTEN amends_outbox, polls every second as a
  fallback. One relay per namespace is active; another waits as a hot standby and takes
  over when it dies. A lost or unknown delivery is published again (identical duplicates,
  never different content). Refuses to run when the live output topic's UUID differs from
  the binding. A database or broker outage shorter than the outage budget is ridden
  through: a fresh session takes the lock again and publishes what is still pending; past
  the budget it exits 1. SIGINT/SIGTERM drain the deliveries in flight and exit 0. Logs JSON lines on
  stderr; writes a heartbeat row (role relay). Needs AMENDS_DATABASE_URL.

  Flags
    --manifest M      the namespace's manifest (required)
    --instance-id ID  the heartbeat row's id (default: hostname-pid)
    --outage-budget-s S
                      how long an outage may last before exit 1 (default 30); 0: exit at once
    --metrics-addr HOST:PORT
                      serve /metrics, /healthz, /readyz (default: $AMENDS_METRICS_ADDR; off)
    --log-level LEVEL debug, info, warn or error (default: $AMENDS_LOG_LEVEL or info)
    --brokers LIST    bootstrap servers (default: $AMENDS_BROKERS or 127.0.0.1:19092)
    --kafka-config FILE
                      librdkafka settings for every Kafka client (default: $AMENDS_KAFKA_CONFIG)

  Example
    $ amends relay --manifest demo-1.manifest.json`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    instanceId: { type: 'string' },
    ...outageBudgetFlag,
    brokers: { type: 'string' },
    kafkaConfig: { type: 'string' },
    ...observabilityFlags,
  },
  async run(cli, io) {
    const relayId = processIdentity(cli.flags.instanceId, cli.input);
    const outageBudgetMs = outageBudgetFrom(cli.flags.outageBudgetS, outageBudgetMaxS);
    const manifestPath = cli.flags.manifest as string;
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    const manifest = await readManifestFile(manifestPath);
    const namespace = manifest.config.namespace;
    const log = jsonLog(io.stderr, { relay: relayId }, logLevelFrom(cli.flags.logLevel, io.env));
    const faultExitAfterPublish = io.env.AMENDS_FAULT === relayFaultExitAfterPublish;
    const applicationName = `amends relay ${relayId}`;

    const stats: RelayStats = {
      state: 'standby',
      batches: 0,
      published_rows: 0,
      republish_rows: 0,
      last_published_id: null,
    };
    const registry = newMetricsRegistry();
    let metrics: RelayMetrics | undefined;
    const ready = () => metrics?.readiness() ?? { ready: false, detail: 'starting' };
    const server = await startMetricsEndpoint(cli.flags.metricsAddr, io.env, registry, ready, log);
    const stop = stopOnSignals(log);
    const ride = { budgetMs: outageBudgetMs, signal: stop.signal, log, role: 'relay' };
    // Started while the database restarts (a supervisor's restart): wait for it within the budget.
    const db = await rideThrough(ride, () => Database.open(databaseUrl, applicationName));
    if (db === undefined) return 0;
    metrics = new RelayMetrics(registry, namespace, stats, db.pool);
    const closers: (() => Promise<unknown>)[] = [() => db.close()];
    if (server !== undefined) closers.unshift(() => server.close());
    let heartbeat: HeartbeatWriter | undefined;
    try {
      const binding = await registeredBindingRiding(ride, db, manifest, manifestPath, databaseUrl);
      if (binding === undefined) return 0;
      const checkTopic = () =>
        withKafkaAdmin(brokers, `amends-relay-${relayId}`, (admin) => checkLiveBinding(admin, binding));
      // Started while a broker or two are down (a supervisor's restart): ride that too.
      if ((await rideThrough(ride, () => checkTopic().then(() => true))) === undefined) return 0;
      log.write('relay_started', {
        namespace,
        output_topic: binding.outputTopic,
        incarnation: binding.incarnation,
        ...(faultExitAfterPublish ? { fault: relayFaultExitAfterPublish } : {}),
      });
      heartbeat = new HeartbeatWriter(
        db.pool,
        { namespace, workerId: relayId, role: 'relay', pid: process.pid },
        () => ({ ...stats, output_topic: binding.outputTopic }),
        log,
      );
      heartbeat.start();

      // Each session takes the role lock on a fresh connection and publishes what is still
      // pending: after an outage the outbox itself is the durable position.
      let producer: SourceProducer | undefined;
      const session: Session<'standby' | 'drained'> = async (progressed) => {
        const lock = await RoleLock.open(databaseUrl, 'relay', namespace, applicationName);
        try {
          const standby = () => {
            stats.state = 'standby';
            log.write('relay_standby', { namespace });
          };
          if (!(await lock.acquire(stop.signal, standby))) return 'standby';
          await checkTopic();
          stats.state = 'active';
          log.write('relay_active', { namespace });
          producer ??= await SourceProducer.open({ brokers, clientId: `amends-relay-${relayId}`, deliveryTimeoutMs });
          const relay = new OutboxRelay({
            ...{ namespace, binding, pool: db.pool, lock, producer, log, faultExitAfterPublish, stats, outageBudgetMs },
            onCycle: () => {
              progressed();
              metrics?.cycled();
            },
          });
          await relay.run(stop.signal);
          return 'drained';
        } finally {
          await lock.close();
        }
      };
      closers.push(async () => producer?.close(producerCloseTimeoutMs));
      const ended = await rideThrough(ride, session);
      stats.state = 'stopped';
      log.write('relay_stopped', {
        state: ended ?? 'drained',
        exit_code: 0,
        published_rows: stats.published_rows,
      });
      return 0;
    } finally {
      stop.detach();
      await heartbeat?.stop();
      for (const close of closers.reverse()) await close().catch(() => {});
    }
  },
});
