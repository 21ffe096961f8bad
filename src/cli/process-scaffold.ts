/**
 * What every long-running process (worker, relay, view) does the same way around its own
 * work: name itself, serve its metrics, stop on SIGINT/SIGTERM, open the database and
 * register the namespace (both riding an outage, docs/design.md#unknown-outcomes: a supervisor restarts a
 * process while the database is still away), beat its heartbeat, and close what it opened
 * in reverse order, whatever happened.
 */

import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import type { Manifest } from '../domain/config.js';
import { HeartbeatWriter, type ProcessRole } from '../io/process/heartbeat-writer.js';
import type { JsonLog } from '../io/process/json-log.js';
import { refuseLiveTwin } from '../io/process/live-twin.js';
import type { Readiness } from '../io/process/metrics-server.js';
import { type RideOptions, rideThrough } from '../io/process/ride-through.js';
import { registerNamespace } from '../io/store/namespace-registry.js';
import { Database, databaseUrlFrom, describeDatabaseError } from '../io/store/postgres.js';
import { type OutputBinding, requireBinding } from '../io/transport/output-binding.js';
import { usageError } from '../kernel/amends-error.js';
import { isDependencyOutage } from './dependency-outage.js';
import { refuseArguments } from './flag-check.js';
import { flagRows } from './help-text.js';
import { readManifestFile } from './input-files.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from './kafka-flags.js';
import { migrateFlag, noMigrateHelp } from './migrate-flag.js';
import { observabilityFlags, observabilityFlagsHelp, startMetricsEndpoint } from './observability-flags.js';
import { outageBudgetDefaultS, outageBudgetFlag, outageBudgetFrom, outageBudgetMaxS } from './outage-flag.js';

const instanceIdPattern = /^[A-Za-z0-9._-]{1,200}$/;

/** Checks `--instance-id` and stray arguments; the id is the flag or host-pid. */
export function processIdentity(instanceId: string | undefined, input: readonly string[]): string {
  if (instanceId !== undefined && !instanceIdPattern.test(instanceId)) {
    throw usageError('--instance-id must be 1-200 characters of [A-Za-z0-9._-]');
  }
  refuseArguments(input);
  return instanceId ?? `${hostname()}-${process.pid}`;
}

/** The flags worker, relay and view share (meow). */
export const processFlags = {
  manifest: { type: 'string', isRequired: true },
  settings: { type: 'string' },
  instanceId: { type: 'string' },
  ...migrateFlag,
  ...outageBudgetFlag,
  ...kafkaFlags,
  ...observabilityFlags,
} as const;

/** `--settings`'s description in every process's help. */
export const settingsFlagHelp = 'key=value per flag name, and database-url (default: $AMENDS_SETTINGS)';

/** The help's paragraph on where settings come from (settings-sources.ts). */
export const settingsSourcesHelp = `Each flag that takes a value may also be given in the environment as AMENDS_ and its
  name (AMENDS_OUTAGE_BUDGET_S) or in the settings file as name=value (outage-budget-s=10);
  a flag wins over the environment, the environment over the file.`;

/** Where relay's and view's help puts the descriptions of its flags. */
const processHelpColumn = 18;

/**
 * The help of `processFlags` as relay and view print it, in the groups each orders its own
 * way (relay: identity, observability, kafka; view: identity, kafka, observability). The
 * worker describes its identity flags in its own words, at another column.
 */
export const processFlagsHelp = {
  identity: flagRows(processHelpColumn, [
    ['--manifest M', "the namespace's manifest (required)"],
    ['--settings FILE', settingsFlagHelp],
    ['--instance-id ID', "the heartbeat row's id (default: hostname-pid)"],
    [
      '--outage-budget-s S',
      `how long an outage may last before exit 1 (default ${outageBudgetDefaultS}); 0: exit at once`,
    ],
    ['--no-migrate', noMigrateHelp],
  ]),
  kafka: kafkaFlagsHelp(processHelpColumn),
  observability: observabilityFlagsHelp(processHelpColumn),
  sources: settingsSourcesHelp,
};

/** What `processFlags` and the environment say, checked, with the manifest read. */
export interface ProcessSettings {
  id: string;
  outageBudgetMs: number;
  manifestPath: string;
  manifest: Manifest;
  databaseUrl: string;
  brokers: string;
  /** False with `--no-migrate`: the schema must be current already. */
  migrate: boolean;
}

/** Usage errors first (identity, budget, endpoints), then the manifest file. */
export async function processSettings(
  flags: {
    instanceId?: string;
    outageBudgetS?: unknown;
    manifest?: unknown;
    brokers?: string;
    kafkaConfig?: string;
    migrate?: boolean;
  },
  input: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<ProcessSettings> {
  const id = processIdentity(flags.instanceId, input);
  const outageBudgetMs = outageBudgetFrom(flags.outageBudgetS, outageBudgetMaxS);
  const manifestPath = flags.manifest as string;
  const databaseUrl = databaseUrlFrom(env);
  const brokers = kafkaEndpointFrom(flags, env);
  const manifest = await readManifestFile(manifestPath);
  return { id, outageBudgetMs, manifestPath, databaseUrl, brokers, manifest, migrate: flags.migrate !== false };
}

export interface ScaffoldOptions {
  role: ProcessRole;
  /** `processIdentity`'s answer. */
  id: string;
  manifest: Manifest;
  databaseUrl: string;
  outageBudgetMs: number;
  /** `ProcessSettings.migrate`: false opens the database only if its schema is current. */
  migrate: boolean;
  log: JsonLog;
  /** `--metrics-addr` (or AMENDS_METRICS_ADDR in `env`); off when neither is set. */
  metricsAddr: string | undefined;
  env: NodeJS.ProcessEnv;
  registry: Registry;
  readiness: () => Readiness;
  /**
   * The id must not be in use by a live process (live-twin.ts): the worker's `--instance-id`,
   * which is its static group membership. Other ids only name heartbeat rows.
   */
  exclusiveId?: boolean;
}

type Closer = () => Promise<unknown>;

export class ProcessScaffold {
  private readonly closers: Closer[] = [];
  private heartbeat: HeartbeatWriter | undefined;
  private readonly stopping = new AbortController();
  private readonly onSignal = (signal: NodeJS.Signals) => this.requestStop(signal);
  /** PostgreSQL's application_name of every session: `amends <role> <id>`. */
  readonly applicationName: string;
  readonly ride: RideOptions;
  private database: Database | undefined;

  private constructor(private readonly options: ScaffoldOptions) {
    this.applicationName = `amends ${options.role} ${options.id}`;
    this.ride = {
      budgetMs: options.outageBudgetMs,
      signal: this.stopping.signal,
      log: options.log,
      role: options.role,
      isOutage: isDependencyOutage,
    };
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  /**
   * Metrics endpoint, signals, database, registration. Undefined when a stop came while it
   * waited out an outage (the caller exits 0); what it opened is closed then.
   */
  static async open(options: ScaffoldOptions): Promise<ProcessScaffold | undefined> {
    const { metricsAddr, env, registry, readiness, log } = options;
    const server = await startMetricsEndpoint(metricsAddr, env, registry, readiness, log);
    const scaffold = new ProcessScaffold(options);
    if (server !== undefined) scaffold.onClose(() => server.close());
    try {
      if (await scaffold.openDatabase()) return scaffold;
    } catch (error) {
      await scaffold.close();
      throw error;
    }
    await scaffold.close();
    return undefined;
  }

  /** Fired by SIGINT/SIGTERM or `requestStop`; its reason is the signal's name. */
  get stopSignal(): AbortSignal {
    return this.stopping.signal;
  }

  get db(): Database {
    if (this.database === undefined) throw new Error('the scaffold has no database before open');
    return this.database;
  }

  /** Logs the stop and fires `stopSignal` (a signal, or the dashboard's quit key). */
  requestStop(signal: NodeJS.Signals): void {
    this.options.log.write('signal', { signal });
    this.stopping.abort(signal);
  }

  /** `close` runs after everything registered later (reverse order), its failure ignored. */
  onClose(close: Closer): void {
    this.closers.push(close);
  }

  /**
   * One heartbeat row about once a second (heartbeat-writer.ts); its last beat is written at
   * close. `onServerChanged`: another PostgreSQL server wrote a beat than the one before.
   */
  startHeartbeat(summarize: () => object, onServerChanged?: (detail: string) => void): void {
    const { role, id, manifest, log } = this.options;
    const identity = { namespace: manifest.config.namespace, workerId: id, role, pid: process.pid };
    this.heartbeat = new HeartbeatWriter(this.db.pool, identity, summarize, log, onServerChanged);
    this.heartbeat.start();
  }

  /** The namespace's output binding (relay, view), riding an outage; undefined on a stop. */
  binding(manifestPath: string): Promise<OutputBinding | undefined> {
    const namespace = this.options.manifest.config.namespace;
    return rideThrough(this.ride, () =>
      requireBinding(this.db.pool, namespace, manifestPath).catch((error: unknown) => {
        throw describeDatabaseError(
          error,
          this.options.databaseUrl,
          `reading the output binding of namespace ${namespace}`,
        );
      }),
    );
  }

  /** Signals off, the last heartbeat, then every closer in reverse order. */
  async close(): Promise<void> {
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
    await this.heartbeat?.stop();
    for (const close of this.closers.splice(0).reverse()) await close().catch(() => {});
  }

  /**
   * Opens the database, registers the namespace (docs/design.md#manifest) and, for an exclusive
   * id, refuses a live twin; each step riding an outage.
   */
  private async openDatabase(): Promise<boolean> {
    const { databaseUrl, manifest, migrate, id } = this.options;
    const open = migrate ? Database.open : Database.openCurrent;
    const db = await rideThrough(this.ride, () => open(databaseUrl, this.applicationName));
    if (db === undefined) return false;
    this.database = db;
    this.onClose(() => db.close());
    const register = () =>
      registerNamespace(db.pool, manifest).then(
        () => true,
        (error: unknown) => {
          throw describeDatabaseError(error, databaseUrl, `registering namespace ${manifest.config.namespace}`);
        },
      );
    if ((await rideThrough(this.ride, register)) !== true) return false;
    if (!this.options.exclusiveId) return true;
    const namespace = manifest.config.namespace;
    const unique = () =>
      refuseLiveTwin(db.pool, namespace, id, this.stopping.signal).then(
        () => true,
        (error: unknown) => {
          throw describeDatabaseError(error, databaseUrl, `reading the heartbeat of --instance-id ${id}`);
        },
      );
    return (await rideThrough(this.ride, unique)) === true;
  }
}
