/**
 * What every benchmark phase shares: where the run writes (artifacts/bench/<run-id>/), the
 * stack's endpoints, one plain pg pool for the harness's own reads, and the child processes
 * it started (all stopped at the end, whatever happened). Topics and manifests are made with
 * the real `amendsctl` commands, as a user makes them; a rebuild-style manifest (same source
 * topic, configuration and incarnation, another namespace) is written here directly.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Manifest } from '../domain/config.js';
import { LiveChildren, packageBin, packageRoot } from '../io/process/child-process.js';
import { withSchemaPath } from '../io/store/database-schema.js';
import { applyMigrations } from '../io/store/migrations.js';
import { withPooledClient } from '../io/store/pooled-client.js';
import { BenchProcess } from './bench-process.js';

export const repoRoot = packageRoot;

export type Role = 'worker' | 'relay' | 'view';

export class BenchContext {
  readonly logsDir: string;
  readonly pool: pg.Pool;
  readonly env: NodeJS.ProcessEnv;
  private readonly processes = new LiveChildren<BenchProcess>();
  /** Every worker process of the run, for the memory figure. */
  readonly workers: BenchProcess[] = [];

  constructor(
    readonly runId: string,
    readonly runDir: string,
    readonly brokers: string,
    readonly databaseUrl: string,
    private readonly say: (line: string) => void,
  ) {
    this.logsDir = join(runDir, 'logs');
    mkdirSync(this.logsDir, { recursive: true });
    this.pool = new pg.Pool({
      connectionString: withSchemaPath(databaseUrl),
      max: 3,
      application_name: `amends bench ${runId}`,
    });
    this.env = {
      ...process.env,
      AMENDS_BROKERS: brokers,
      AMENDS_DATABASE_URL: databaseUrl,
      // The figures come from the lines of each store attempt, relay batch and view poll
      // (worker-log-tail.ts, hop-profile.ts): debug lines, as many as before they were.
      AMENDS_LOG_LEVEL: 'debug',
      MALLOC_ARENA_MAX: workerMallocArenaMax(process.env),
    };
  }

  /**
   * Brings the database's schema up to date before any phase reads it: the harness polls the
   * store's tables from the start, before a worker has migrated a fresh database.
   */
  async migrate(): Promise<void> {
    await withPooledClient(this.pool, applyMigrations);
  }

  progress(line: string): void {
    this.say(line);
  }

  /** A namespace (and topic) name of this run: [a-z0-9-], at most 63 characters. */
  name(suffix: string): string {
    return `bench-${this.runId}-${suffix}`.slice(0, 63);
  }

  amendsctl(args: string[]): string {
    const r = spawnSync(packageBin('amendsctl'), args, { env: this.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`amendsctl ${args[0]} exited ${r.status}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  /**
   * A fresh source topic: by default two partitions with the two-key fixture config
   * (source-create --config fixtures/two-keys.config.json), or the given config file and
   * partition count.
   */
  createSource(
    suffix: string,
    layout: { configPath: string; partitions: number } = {
      configPath: join(repoRoot, 'fixtures', 'two-keys.config.json'),
      partitions: 2,
    },
  ): { manifest: Manifest; path: string } {
    const namespace = this.name(suffix);
    const text = this.amendsctl([
      ...['source-create', '--namespace', namespace, '--topic', namespace],
      ...['--partitions', String(layout.partitions), '--config', layout.configPath],
    ]);
    const path = join(this.runDir, `${namespace}.manifest.json`);
    writeFileSync(path, text);
    return { manifest: JSON.parse(text) as Manifest, path };
  }

  /** Another namespace over the same source: same topic, configuration and incarnation. */
  rebuildManifest(source: Manifest, suffix: string): { manifest: Manifest; path: string } {
    const namespace = this.name(suffix);
    const manifest: Manifest = { source_topic: source.source_topic, config: { ...source.config, namespace } };
    const path = join(this.runDir, `${namespace}.manifest.json`);
    writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
    return { manifest, path };
  }

  start(role: Role, manifestPath: string, instanceId: string, extra: string[] = []): BenchProcess {
    const process = new BenchProcess({
      name: instanceId,
      command: packageBin('amends'),
      args: [role, '--manifest', manifestPath, '--instance-id', instanceId, ...extra],
      env: this.env,
      logPath: join(this.logsDir, `${instanceId}.log`),
    });
    this.track(process);
    if (role === 'worker') this.workers.push(process);
    return process;
  }

  track(process: BenchProcess): BenchProcess {
    return this.processes.add(process);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.processes.running().map((p) => p.stop()));
  }

  async close(): Promise<void> {
    await this.stopAll();
    this.processes.release();
    await this.pool.end();
  }
}

/**
 * The processes run with glibc's malloc held to two arenas unless the caller chose otherwise,
 * as docs/operations.md advises for workers. librdkafka's threads and libuv's pool allocate
 * in arenas of their own, which each keep freed memory: on the 2,000,000-record narrow scale
 * run (same build, same load) the workers' peak RSS was 225 / 265 MB with glibc's default
 * and 214 / 215 MB with 2 (docs/benchmarks.md). The machine section records the value.
 */
export function workerMallocArenaMax(env: NodeJS.ProcessEnv): string {
  return env.MALLOC_ARENA_MAX ?? '2';
}
