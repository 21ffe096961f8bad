/**
 * `amends worker --manifest M [--batch-size N] [--instance-id ID]` (also `amends --manifest M`):
 * the source worker (docs/design.md#worker). This file holds its flags, help and their checks; the worker
 * itself — store, observer, consumer, the wrappers around them and the actor runtime — is
 * composed in src/io/worker/worker-composition.ts.
 *
 * SIGINT/SIGTERM cancel and join all work before the broker client closes: exit 0. A fatal
 * or exhausted operation exits 1 with a one-line diagnostic (the runtime's failure).
 */
import { mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Result } from 'meow';
import type { Manifest } from '../../domain/config.js';
import { defaultSessionTimeoutMs } from '../../io/kafka/source-consumer-options.js';
import { jsonLog, type ProcessLog } from '../../io/process/json-log.js';
import { newMetricsRegistry } from '../../io/process/metrics-server.js';
import { runWorker, type StateHooks, type WorkerDashboardFeed } from '../../io/worker/worker-composition.js';
import { WorkerMetrics } from '../../io/worker/worker-metrics.js';
import { usageError } from '../../kernel/amends-error.js';
import { defaultBatchSize } from '../../machines/limits.js';
import { type CommandIo, defineCommand } from '../command.js';
import { capHeapGrowth } from '../heap-growth.js';
import { kafkaFlagsHelp } from '../kafka-flags.js';
import { noMigrateHelp } from '../migrate-flag.js';
import { observabilityFlagsHelp } from '../observability-flags.js';
import { outageBudgetDefaultS, outageBudgetMaxS } from '../outage-flag.js';
import { failed, withProcessLog } from '../process-log.js';
import {
  ProcessScaffold,
  processFlags,
  processSettings,
  settingsFlagHelp,
  settingsSourcesHelp,
} from '../process-scaffold.js';
import { startWorkerDashboard } from './tui.js';

const batchSizeMax = 10_000;
/** The flag refuses a session timeout below 1 s; its default is the broker's minimum (6 s). */
const sessionTimeoutMinMs = 1_000;

/**
 * A batch's statement parameters are strings of megabytes (the raw bytes as bytea literals),
 * which V8 allocates in the old generation's large-object space, so they stayed until a full
 * collection of a heap grown for them: at batch 5000 two workers peaked at 259–296 MB; with the
 * growth capped at 60 % at 182–202 MB, at 2000 at 160–170 MB instead of 215–238, records/s
 * within the runs' spread (docs/choices.md).
 */
export const workerHeapGrowingPercent = 60;

/** Where the flags' descriptions start in the help (its flags are longer than relay's and view's). */
const workerHelpColumn = 27;

const workerHelp = `worker --manifest M [--batch-size N] [--instance-id ID] [--outage-budget-s ${outageBudgetDefaultS}] [--tui]

  Joins the namespace's consumer group (amends.<namespace>.source) and decides every
  record of its assigned partitions exactly once: each poll's records are decided in one
  PostgreSQL transaction fenced by the partition's epoch and frontier. Offsets come from
  PostgreSQL only. Writes a heartbeat row about once a second. SIGINT/SIGTERM drain and
  exit 0. A database or broker outage (exhausted retries, an unresolved commit outcome, an
  unobservable source) suspends processing: the worker stays in the group, probes both,
  and claims its partitions afresh once they answer; past the outage budget it exits 1, as
  it does at once for an invalid source. A database that comes back older (a failover that
  lost commits, a restored backup) is met the same way, and the lost records are decided
  again; a configuration revision it lost ends the worker (exit 1). Logs on stderr, its
  failure as the last line: JSON lines (one per store attempt at --log-level debug), pretty
  on a terminal. Needs AMENDS_DATABASE_URL.

  ${settingsSourcesHelp}

  Flags
    --manifest M               the manifest printed by source-create (required)
    --settings FILE            ${settingsFlagHelp}
    --batch-size N             the most records one poll takes and one transaction decides
                               (default ${defaultBatchSize}); a poll takes what is queued and waits
                               only for the first record, so a quiet source is not delayed;
                               1: one record per transaction
    --instance-id ID           static group membership (KIP-345): a restarted worker with
                               the same id gets its partitions back without a rebalance
    --session-timeout-ms N     group session timeout (default ${defaultSessionTimeoutMs}, the broker minimum)
    --outage-budget-s S        how long an outage may last before exit 1 (default ${outageBudgetDefaultS}, at most
                               ${outageBudgetMaxS}: a riding worker does not poll, and budget + 20 s
                               stays below max.poll.interval.ms); 0: exit at the first one
    --no-migrate               ${noMigrateHelp}
${kafkaFlagsHelp(workerHelpColumn)}
${observabilityFlagsHelp(workerHelpColumn)}
    --tui                      draw the dashboard (amends tui) of this worker and its namespace;
                               the JSON log lines then go to artifacts/logs/worker-<id>.jsonl

  Example
    $ amends worker --manifest manifest.json --instance-id worker-a`;

const workerFlags = {
  ...processFlags,
  batchSize: { type: 'number', default: defaultBatchSize },
  sessionTimeoutMs: { type: 'number', default: defaultSessionTimeoutMs },
  tui: { type: 'boolean', default: false },
} as const;

/** `amends worker`: the store's State wrapped by nothing but the worker's own wrappers. */
export const workerCommand = workerCommandWith();

/**
 * The worker command with `stateHooks` around the store's State (worker-composition.ts): the
 * showcase's fault points are injected by its own entry (src/cli/faultable-worker.ts), so
 * `amends worker` knows none of them.
 */
export function workerCommandWith(stateHooks?: StateHooks) {
  return defineCommand({
    name: 'worker',
    logRole: 'worker',
    summary: 'decide source records exactly once into PostgreSQL',
    help: workerHelp,
    flags: workerFlags,
    takesSettings: true,
    run: (cli, io) => runWorkerCommand(cli, io, stateHooks),
  });
}

/** The worker's log around all it does: its failure is the log's last line (process-log.ts). */
function runWorkerCommand(
  cli: Result<typeof workerFlags>,
  io: CommandIo,
  stateHooks: StateHooks | undefined,
): Promise<number> {
  return withProcessLog('worker', cli.flags, io, (processLog) => runWorkerProcess(cli, io, stateHooks, processLog));
}

/** Checks the flags, opens the process scaffold and runs the composed worker until it is done. */
async function runWorkerProcess(
  cli: Result<typeof workerFlags>,
  io: CommandIo,
  stateHooks: StateHooks | undefined,
  processLog: ProcessLog,
): Promise<number> {
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
  const bound = { namespace: manifest.config.namespace, worker: workerId };
  processLog.bind(bound);
  // --tui: the screen is the dashboard's, so the JSON lines go to a file (named in its header);
  // its failure is written there too, and on the screen once the dashboard has closed.
  const logFile = cli.flags.tui ? join('artifacts', 'logs', `worker-${workerId}.jsonl`) : null;
  const log =
    logFile === null ? processLog : jsonLog(appendOnlyFile(logFile), { role: 'worker', ...bound }, processLog.level);
  const registry = newMetricsRegistry();
  const metrics = new WorkerMetrics(registry, manifest.config.namespace);
  try {
    // Started while the database restarts (a supervisor's restart): the scaffold waits for it
    // within the outage budget, as the running worker would.
    const scaffold = await ProcessScaffold.open({
      ...{ role: 'worker', id: workerId, manifest, databaseUrl, outageBudgetMs, log, registry, env: io.env },
      migrate: settings.migrate,
      metricsAddr: cli.flags.metricsAddr,
      readiness: () => metrics.readiness(),
      // --instance-id is the group's static membership: a second live holder would fence the first.
      exclusiveId: instanceId !== undefined,
    });
    if (scaffold === undefined) return 0;
    const openDashboard =
      logFile === null
        ? undefined
        : () => openWorkerDashboard(scaffold, { databaseUrl, brokers, manifest, workerId, logFile });
    try {
      const run = {
        host: scaffold,
        manifest,
        workerId,
        brokers,
        log,
        metrics,
        batchSize,
        instanceId,
        sessionTimeoutMs,
      };
      return await runWorker({ ...run, outageBudgetMs, env: io.env, openDashboard, stateHooks });
    } finally {
      await scaffold.close();
    }
  } catch (error) {
    if (log !== processLog) failed(log, error, io.env);
    throw error;
  }
}

/** `--tui`: this worker's dashboard; q or Ctrl-C asks the worker to drain. */
function openWorkerDashboard(
  scaffold: ProcessScaffold,
  where: { databaseUrl: string; brokers: string; manifest: Manifest; workerId: string; logFile: string },
): WorkerDashboardFeed {
  const onQuit = () => scaffold.requestStop('SIGINT');
  const dashboard = startWorkerDashboard({ ...where, onQuit });
  scaffold.onClose(() => dashboard.close());
  return dashboard;
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
