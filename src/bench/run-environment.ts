/**
 * What the figures were measured on: the machine (CPUs, memory, load before and after, since
 * these machines are shared) and the versions of everything in the path.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { RdKafka } from '@confluentinc/kafka-javascript';
import type pg from 'pg';
import { repoRoot, workerMallocArenaMax } from './bench-context.js';

export interface Machine {
  hostname: string;
  platform: string;
  kernel: string;
  cpu_model: string;
  cpus: number;
  memory_gb: number;
  load_average_start: number[];
  load_average_end?: number[];
  [extra: string]: unknown;
}

export function describeMachine(): Machine {
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    platform: `${os.platform()} ${os.arch()}`,
    kernel: os.release(),
    cpu_model: cpus[0]?.model ?? 'unknown',
    cpus: cpus.length,
    memory_gb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    load_average_start: os.loadavg().map((l) => Math.round(l * 100) / 100),
    malloc_arena_max: workerMallocArenaMax(process.env),
  };
}

export async function describeVersions(pool: pg.Pool): Promise<Record<string, string>> {
  const pkg = (name: string) =>
    (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
      .version;
  const server = await pool.query<{ server_version: string }>('SHOW server_version');
  const syncMethod = await pool.query<{ wal_sync_method: string }>('SHOW wal_sync_method');
  const commit = await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
  const pom = readFileSync(join(repoRoot, 'stack', 'kafka', 'pom.xml'), 'utf8');
  return {
    amends: (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version,
    git_commit: gitCommit(),
    node: process.version,
    '@confluentinc/kafka-javascript': pkg('@confluentinc/kafka-javascript'),
    librdkafka: RdKafka.librdkafkaVersion,
    pg: pkg('pg'),
    xstate: pkg('xstate'),
    vega: pkg('vega'),
    'vega-lite': pkg('vega-lite'),
    postgresql: server.rows[0]?.server_version ?? 'unknown',
    postgresql_wal_sync_method: syncMethod.rows[0]?.wal_sync_method ?? 'unknown',
    postgresql_synchronous_commit: commit.rows[0]?.synchronous_commit ?? 'unknown',
    kafka_broker: /<kafka\.version>([^<]+)</.exec(pom)?.[1] ?? 'unknown',
  };
}

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).trim();
    return dirty === '' ? head : `${head}+uncommitted`;
  } catch {
    return 'unknown';
  }
}
