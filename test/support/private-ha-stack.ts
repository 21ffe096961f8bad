/**
 * A private HA database (issue 33): `scripts/stack.sh up --database ha --database-only` the
 * way a user starts one (etcd, two PostgreSQL nodes under Patroni, HAProxy), but in a
 * temporary stack directory and on AMENDS_TEST_HA_PG_PORT (default 26432: HAProxy's primary
 * port; the replica port, etcd, the statistics page and the nodes follow at +1 … +21, see
 * scripts/stack-ha.sh), so neither the shared stack, the 3-broker suite's (25432) nor a chaos
 * run's (27432) is touched. No broker is started. `stop()` stops it and removes its directory.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { HaNode, HaStatus } from '../../src/showcase/ha-control.js';
import {
  lastLine,
  type PrivateStackOptions,
  requireUsablePorts,
  runStackScript,
} from '../../src/showcase/private-stack.js';

/** initdb, a base backup and two PostgreSQL starts under Patroni: about 30 s on a loaded 2-core machine. */
export const haStartBudgetMs = 150_000;
const credentials = 'amends:amends-local-only';
/** The stack's superuser (local-only, like every secret of the stack): pg_stat_replication's details. */
const superuser = 'postgres:amends-local-only';

/** The shape the chaos run's HA control reads too (ha-control.ts), from `stack.sh ha-status` here. */
export type { HaNode, HaStatus } from '../../src/showcase/ha-control.js';

export class PrivateHaStack {
  readonly databaseUrl: string;
  readonly replicaUrl: string;
  readonly superuserUrl: string;
  readonly caFile: string;

  private constructor(
    private readonly o: PrivateStackOptions,
    private readonly parent: string,
  ) {
    this.databaseUrl = `postgres://${credentials}@127.0.0.1:${o.pgPort}/amends?sslmode=disable`;
    this.replicaUrl = `postgres://${credentials}@127.0.0.1:${o.pgPort + 1}/amends?sslmode=disable`;
    this.superuserUrl = `postgres://${superuser}@127.0.0.1:${o.pgPort}/postgres?sslmode=disable`;
    this.caFile = join(o.stackDir, 'tls', 'ca.pem');
  }

  /** Starts the HA database; a port in use or a failed start is one line (and nothing is left running). */
  static async start(): Promise<PrivateHaStack> {
    const pgPort = Number(process.env.AMENDS_TEST_HA_PG_PORT ?? 26432);
    // The database runs as the postgres user: it must be able to enter the directory.
    const parent = mkdtempSync(join(tmpdir(), 'amends-test-ha-'));
    chmodSync(parent, 0o755);
    // No broker starts (--database-only); its port is set apart all the same, so that
    // `down` could never stop the shared one.
    const o = { stackDir: join(parent, '.stack'), basePort: pgPort + 60, pgPort };
    const ports = [0, 1, 2, 3, 4, 10, 11, 20, 21].map((offset) => pgPort + offset);
    try {
      await requireUsablePorts(ports, o.stackDir);
    } catch (error) {
      rmSync(parent, { recursive: true, force: true });
      throw error;
    }
    const stack = new PrivateHaStack(o, parent);
    const up = await stack.run(['up', '--database', 'ha', '--database-only'], haStartBudgetMs);
    if (up.code !== 0) {
      await stack.stop().catch(() => {});
      throw new Error(`stack.sh up --database ha exited ${up.code} (logs in ${o.stackDir}/ha): ${lastLine(up.stderr)}`);
    }
    return stack;
  }

  async status(): Promise<HaStatus> {
    const lines = (await this.must(['ha-status'])).split('\n').filter((l) => l !== '');
    const nodes: HaNode[] = [];
    const routes: Record<string, string> = {};
    for (const line of lines) {
      const [name = '', second = '', third = ''] = line.split(' ');
      if (name.endsWith('-port')) routes[name] = third;
      else nodes.push({ name, role: second, address: third });
    }
    return { nodes, primaryRoute: routes['primary-port'] ?? '', replicaRoute: routes['replica-port'] ?? '' };
  }

  /** SIGKILL of the primary's postmaster: the node (`node-N`) and the pid killed. */
  async killPrimary(): Promise<{ node: string; pid: number }> {
    const [node = '', pid = ''] = (await this.must(['ha-kill-primary'])).trim().split(' ');
    return { node, pid: Number(pid) };
  }

  /** A planned switchover to the synchronous standby; the new primary (`node-N`). */
  async switchover(): Promise<string> {
    return (await this.must(['ha-switchover'])).trim();
  }

  /** Node `node-N`'s directory: its data directory `data/`, `patroni.yml`, `patroni.log`. */
  nodeDir(node: string): string {
    return join(this.o.stackDir, 'ha', node);
  }

  /** patronictl against this stack (through node 1's configuration: both name the same etcd). */
  patronictl(args: string[]): Promise<string> {
    return run('patronictl', ['-c', join(this.nodeDir('node-1'), 'patroni.yml'), ...args]);
  }

  /**
   * One of the nodes' PostgreSQL programs (pg_ctl, pg_basebackup, …, from Patroni's bin_dir)
   * as the user the nodes run as: postgres when this runs as root (stack-ha.sh does the same).
   */
  asNodeUser(program: string, args: string[], env: Record<string, string> = {}): Promise<string> {
    const config = readFileSync(join(this.nodeDir('node-1'), 'patroni.yml'), 'utf8');
    const binDir = /^\s*bin_dir:\s*(\S+)\s*$/m.exec(config)?.[1];
    if (binDir === undefined) throw new Error('patroni.yml names no bin_dir');
    const command = [join(binDir, program), ...args];
    const asPostgres = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
    const [file = '', ...rest] = [...asPostgres, ...command];
    return run(file, rest, env);
  }

  async stop(): Promise<void> {
    try {
      await this.must(['down']);
    } finally {
      rmSync(this.parent, { recursive: true, force: true });
    }
  }

  get stackDir(): string {
    return this.o.stackDir;
  }

  private run(args: string[], budgetMs?: number) {
    return runStackScript(this.o, args, budgetMs);
  }

  private async must(args: string[]): Promise<string> {
    const run = await this.run(args);
    if (run.code !== 0) throw new Error(`stack.sh ${args.join(' ')} exited ${run.code}: ${lastLine(run.stderr)}`);
    return run.stdout;
  }
}

const execFileAsync = promisify(execFile);

/** Runs a program to its end (60 s at most); its stdout, or an error with its stderr's last line. */
async function run(file: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await execFileAsync(file, args, { env: { ...process.env, ...env }, timeout: 60_000 });
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`${file} ${args.join(' ')} failed: ${lastLine(stderr) || String(error)}`);
  }
}
