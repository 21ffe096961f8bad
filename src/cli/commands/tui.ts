/**
 * `amends tui --manifest M [--brokers B]`: the dashboard of a whole namespace
 * (docs/design.md#dashboard). Every process of the namespace is shown from PostgreSQL (its
 * heartbeat row and the inspection queries) and the broker's ends, polled by
 * src/tui/dashboard-feed.ts into the store that the ink components read. Read-only, as
 * `amendsctl inspect`: an unregistered namespace or an old schema is a one-line error
 * (read-only-namespace.ts). q or Ctrl-C exits 0.
 */

import pg from 'pg';
import type { Manifest } from '../../domain/config.js';
import { databaseTarget, databaseUrlFrom, sessionConfig } from '../../io/store/postgres.js';
import { openRegisteredNamespace } from '../../io/store/read-only-namespace.js';
import { operationalError } from '../../kernel/amends-error.js';
import { DashboardFeed, pollIntervalMs } from '../../tui/dashboard-feed.js';
import { createLocalFeed, type LocalFeed } from '../../tui/dashboard-feed-local.js';
import { DashboardStore } from '../../tui/dashboard-store.js';
// ink and react load only when a dashboard is drawn: every amends process imports this module,
// and they cost about a second of start-up (the supervised restart of a worker waits for it).
import type { RunningDashboard } from '../../tui/run-dashboard.js';
import type { LocalSummary } from '../../tui/worker-report.js';
import { defineCommand } from '../command.js';
import { refuseArguments } from '../flag-check.js';
import { readManifestFile } from '../input-files.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';

export const tuiCommand = defineCommand({
  name: 'tui',
  summary: 'a live terminal dashboard of every process of a namespace',
  help: `tui --manifest M [--brokers LIST]

  Draws the namespace's partitions (the partition actor's state, owner, epoch, frontier,
  broker end, lag, last outcome, records/s), its worker processes (group state, heartbeat
  age), decisions by outcome, quarantine, outbox and the recent decisions, refreshed about
  every ${pollIntervalMs / 1000} s from PostgreSQL's heartbeat and inspection rows and the broker's ends.
  Keys: q quit, ↑/↓ select a partition (its statechart path and context), ? help.
  Needs a terminal and AMENDS_DATABASE_URL with the namespace registered (by amends worker
  or amendsctl source-load: tui only reads); the broker is optional.

  Flags
    --manifest M   the namespace's manifest (required)
${kafkaFlagsHelp(15)}

  Example
    $ amends tui --manifest manifest.json`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    ...kafkaFlags,
  },
  async run(cli, io) {
    refuseArguments(cli.input);
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    const manifest = await readManifestFile(cli.flags.manifest as string);
    if (io.stdout.isTTY !== true || process.stdin.isTTY !== true) {
      throw operationalError('amends tui draws on a terminal: run it in one (amendsctl inspect prints the same data)');
    }
    const namespace = manifest.config.namespace;
    const db = await openRegisteredNamespace(databaseUrl, manifest, 'amends tui');
    try {
      const store = new DashboardStore({
        header: {
          mode: 'tui',
          namespace,
          sourceTopic: manifest.source_topic,
          incarnation: manifest.config.source_incarnation,
          brokers,
          database: databaseTarget(databaseUrl),
          logFile: null,
        },
        partitionCount: manifest.config.partitions,
      });
      const feed = new DashboardFeed({
        db: db.pool,
        namespace,
        sourceTopic: manifest.source_topic,
        partitionCount: manifest.config.partitions,
        brokers,
        store,
      });
      let quit: () => void = () => {};
      const quitting = new Promise<void>((resolve) => {
        quit = resolve;
      });
      const onSignal = () => quit();
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      feed.start();
      const { runDashboard } = await import('../../tui/run-dashboard.js');
      const dashboard = runDashboard(store, () => quit(), { stdout: io.stdout as NodeJS.WriteStream });
      try {
        await quitting;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await dashboard.close();
        await feed.stop();
      }
      return 0;
    } finally {
      await db.close();
    }
  },
});

/**
 * The dashboard of `amends worker --tui`: the same components, the worker's own actors fed
 * from xstate's inspection stream (dashboard-feed-local.ts), the rest of the namespace
 * (other workers, counts, recent decisions) from the PostgreSQL feed on a small pool of its
 * own, so the dashboard never takes a connection the worker's decisions need.
 */
export interface WorkerDashboardOptions {
  databaseUrl: string;
  brokers: string;
  manifest: Manifest;
  workerId: string;
  logFile: string;
  /** q or Ctrl-C: asks the worker to drain (the dashboard stays until `close`). */
  onQuit: () => void;
}

export interface WorkerDashboard {
  inspect: LocalFeed['inspect'];
  start(summary: () => LocalSummary): void;
  close(): Promise<void>;
}

const feedPoolSize = 2;

export function startWorkerDashboard(options: WorkerDashboardOptions): WorkerDashboard {
  const { manifest, workerId } = options;
  const store = new DashboardStore({
    header: {
      mode: `worker --tui ${workerId}`,
      namespace: manifest.config.namespace,
      sourceTopic: manifest.source_topic,
      incarnation: manifest.config.source_incarnation,
      brokers: options.brokers,
      database: databaseTarget(options.databaseUrl),
      logFile: options.logFile,
    },
    partitionCount: manifest.config.partitions,
    timeline: true,
  });
  const pool = new pg.Pool({
    ...sessionConfig(options.databaseUrl, `amends worker ${workerId} dashboard`),
    max: feedPoolSize,
  });
  pool.on('error', () => {});
  const feed = new DashboardFeed({
    db: pool,
    namespace: manifest.config.namespace,
    sourceTopic: manifest.source_topic,
    partitionCount: manifest.config.partitions,
    brokers: options.brokers,
    store,
  });
  const local = createLocalFeed(store, { id: workerId, pid: process.pid });
  let dashboard: RunningDashboard | undefined;
  let drawing: Promise<void> = Promise.resolve();
  let quitting = false;
  return {
    inspect: local.inspect,
    start(summary) {
      local.start(summary);
      feed.start();
      drawing = import('../../tui/run-dashboard.js').then(({ runDashboard }) => {
        dashboard = runDashboard(store, () => {
          if (quitting) return;
          quitting = true;
          dashboard?.setStopping('stopping: draining the partitions…');
          options.onQuit();
        });
      });
    },
    async close() {
      local.stop();
      await feed.pollOnce();
      await drawing;
      await dashboard?.close();
      await feed.stop();
      await pool.end().catch(() => {});
    },
  };
}
