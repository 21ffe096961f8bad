/**
 * A private 3-broker KRaft cluster and PostgreSQL, started with `scripts/stack.sh up --brokers
 * 3` the way a user starts one, but in a stack directory of its own and on other ports, so a
 * user's stack (19092, 15432) is never touched. Node N's plaintext listener is on
 * `basePort + (N-1)*100`, its controller and SASL_SSL listeners on +1 and +2. With `database:
 * 'ha'` the database is the HA one (`--database ha`: etcd, two Patroni nodes, HAProxy on
 * pgPort; stack-ha.sh), each Patroni reaching etcd through a link of this process's
 * (etcd-links.ts) so that the chaos run can cut one off (ha-control.ts).
 *
 * Every port must be free before it starts: a cluster left on them by an earlier run would
 * otherwise be adopted by stack.sh and not be this run's to stop. `stop()` (stack.sh down)
 * stops what it started; the directory records its ports (`private-stack.json`, until that
 * stop), so that `stopLeftover` stops what an interrupted run left running there. The chaos run (chaos-run.ts) and the 3-broker test suite use it;
 * the fault helpers (a broker's pid, the database killed and started) are the chaos run's.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs from 'kafkajs';
import { packageRoot } from '../io/process/child-process.js';
import { operationalError } from '../kernel/amends-error.js';
import { errorMessage } from '../kernel/error-message.js';
import { EtcdLinks } from './etcd-links.js';
import { HaControl } from './ha-control.js';
import type { ChaosDatabase } from './nemesis-plan.js';

export const brokerCount = 3;
const nodePortStep = 100;
/** Three JVMs starting at once on a 2-core machine: about 45 s when idle, more under load. */
export const clusterStartBudgetMs = 170_000;
/** The JIT's first tier only: a private stack's brokers are short-lived (see `stack`). */
const privateStackJvmOpts = '-XX:TieredStopAtLevel=1';
const stackCommandBudgetMs = 90_000;
/** initdb, a base backup and two PostgreSQL starts under Patroni, beside the brokers' start. */
const haStartExtraMs = 90_000;
const haNodes = [1, 2];
const recordFile = 'private-stack.json';

export interface PrivateStackOptions {
  stackDir: string;
  basePort: number;
  pgPort: number;
  /** Default single. */
  database?: ChaosDatabase;
}

export interface StackRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export class PrivateStack {
  readonly brokerList: string[];
  readonly brokers: string;
  readonly databaseUrl: string;

  /** The HA database's faults; undefined for the single PostgreSQL. */
  readonly ha: HaControl | undefined;

  private constructor(
    private readonly o: PrivateStackOptions,
    private readonly links: EtcdLinks | undefined,
  ) {
    this.brokerList = nodePorts(o.basePort).map((p) => `127.0.0.1:${p}`);
    this.brokers = this.brokerList.join(',');
    this.databaseUrl = `postgres://amends:amends-local-only@127.0.0.1:${o.pgPort}/amends?sslmode=disable`;
    this.ha =
      links === undefined
        ? undefined
        : new HaControl({
            stackDir: o.stackDir,
            pgPort: o.pgPort,
            nodes: haNodes,
            links,
            stack: (args) => this.output(args),
          });
  }

  get stackDir(): string {
    return this.o.stackDir;
  }

  /** Starts the cluster and the database; a port in use or a failed start is one line. */
  static async start(o: PrivateStackOptions): Promise<PrivateStack> {
    const ha = o.database === 'ha';
    await requireUsablePorts(stackPorts(o), o.stackDir);
    mkdirSync(o.stackDir, { recursive: true });
    writeFileSync(join(o.stackDir, recordFile), `${JSON.stringify({ ...o, owner_pid: process.pid })}\n`);
    // Patroni needs etcd to bootstrap: its links listen first.
    const links = ha ? await EtcdLinks.start(o.pgPort, haNodes) : undefined;
    const stack = new PrivateStack(o, links);
    const args = ['up', '--brokers', String(brokerCount), ...(ha ? ['--database', 'ha'] : [])];
    const up = await stack.stack(args, clusterStartBudgetMs + (ha ? haStartExtraMs : 0));
    if (up.code !== 0) {
      await stack.stop().catch(() => {});
      throw operationalError(
        `stack.sh ${args.join(' ')} exited ${up.code} (logs in ${o.stackDir}): ${lastLine(up.stderr)}`,
      );
    }
    return stack;
  }

  /**
   * Empties `o.stackDir` for a new stack without harming one that runs: a run still going
   * there (its recorded process alive) is refused, a stack an interrupted run left is stopped
   * (with the ports it recorded), and then every port of the new stack must be free (anything
   * else there, e.g. a stack whose run recorded nothing, is refused and left untouched).
   * Only then is the directory removed. (A chaos run that removed the directory of another
   * checkout's live run, through the shared .stack, is what this order is for.)
   */
  static async freshDir(o: PrivateStackOptions, note: (line: string) => void = () => {}): Promise<void> {
    await PrivateStack.stopLeftover(o.stackDir, note);
    await requireUsablePorts(stackPorts(o), o.stackDir);
    rmSync(o.stackDir, { recursive: true, force: true });
    mkdirSync(o.stackDir, { recursive: true });
  }

  /**
   * Stops what a private stack left running in `stackDir` (a run that was killed before its
   * own stop): stack.sh down with the ports the directory records. Nothing recorded, nothing
   * to stop; a stack whose process still runs (another chaos run) is refused in one line.
   */
  static async stopLeftover(stackDir: string, note: (line: string) => void = () => {}): Promise<void> {
    const file = join(stackDir, recordFile);
    if (!existsSync(file)) return;
    let recorded: PrivateStackOptions & { owner_pid?: number };
    try {
      recorded = JSON.parse(readFileSync(file, 'utf8')) as PrivateStackOptions & { owner_pid?: number };
    } catch (error) {
      throw operationalError(`${file} is unreadable (${errorMessage(error)}): stop that stack by hand`);
    }
    const owner = recorded.owner_pid;
    if (owner !== undefined && owner !== process.pid && processRuns(owner)) {
      throw operationalError(
        `${stackDir} is the stack of a run that is still going (pid ${owner}): wait for it to end, or stop it (kill ${owner}), then start again`,
      );
    }
    note(`stopping what an earlier run (pid ${owner ?? 'unknown'}) left running in ${stackDir}`);
    const down = await runStackScript({ ...recorded, stackDir }, ['down']);
    if (down.code !== 0) {
      throw operationalError(`stopping the stack an earlier run left in ${stackDir} failed: ${lastLine(down.stderr)}`);
    }
  }

  /** Runs `scripts/stack.sh ARGS` against this stack's directory and ports. */
  stack(args: string[], budgetMs = stackCommandBudgetMs): Promise<StackRun> {
    return runStackScript(this.o, args, budgetMs);
  }

  /** `scripts/stack.sh ARGS`' stdout; its last stderr line as the error when it fails. */
  private async output(args: string[]): Promise<string> {
    const run = await this.stack(args);
    if (run.code !== 0)
      throw operationalError(`stack.sh ${args.join(' ')} exited ${run.code}: ${lastLine(run.stderr)}`);
    return run.stdout;
  }

  /** The pid of node N's broker JVM (1-based, as KRaft numbers them). */
  brokerPid(node: number): number {
    const file = join(this.o.stackDir, 'kafka-cluster', `node-${node}`, 'kafka.pid');
    return Number(readFileSync(file, 'utf8').trim());
  }

  /** Starts whatever broker is down, leaving PostgreSQL as it is. */
  async startBrokers(): Promise<void> {
    await this.must(['up', '--brokers', String(brokerCount), '--kafka-only'], clusterStartBudgetMs);
  }

  /** PostgreSQL stopped at once, as a crash would (`pg_ctl -m immediate`). */
  async killDatabase(): Promise<void> {
    await this.must(['db-kill']);
  }

  async startDatabase(): Promise<void> {
    await this.must(['db-start']);
  }

  /** stack.sh down; then the etcd links (Patroni stops with etcd still reachable). */
  async stop(): Promise<void> {
    try {
      await this.must(['down']);
      // Stopped: nothing here is left for stopLeftover to stop.
      rmSync(join(this.o.stackDir, recordFile), { force: true });
    } finally {
      await this.links?.close();
    }
  }

  /** Removes `stackDir` when its stack was stopped (its record is gone); false when it may still run. */
  static removeStopped(stackDir: string): boolean {
    if (existsSync(join(stackDir, recordFile))) return false;
    rmSync(stackDir, { recursive: true, force: true });
    return true;
  }

  private async must(args: string[], budgetMs?: number): Promise<void> {
    const run = await this.stack(args, budgetMs);
    if (run.code !== 0)
      throw operationalError(`stack.sh ${args.join(' ')} exited ${run.code}: ${lastLine(run.stderr)}`);
  }
}

/**
 * Refuses, in one line, ports that a private stack cannot count on: one inside the kernel's
 * ephemeral range, or one in use.
 */
export async function requireUsablePorts(ports: number[], stackDir: string): Promise<void> {
  const ephemeral = ephemeralPorts();
  const taken = ports.find((p) => p >= ephemeral[0] && p <= ephemeral[1]);
  if (taken !== undefined) {
    // Seen in a chaos run: a client's outgoing connection took a killed broker's port as its
    // own local port, and the broker could not listen on it again.
    throw operationalError(
      `port ${taken} lies in this machine's ephemeral range ${ephemeral[0]}-${ephemeral[1]} (outgoing connections may take it while a broker is down): pick ports below ${ephemeral[0]}`,
    );
  }
  for (const port of ports) {
    if (!(await portFree(port))) {
      throw operationalError(
        `port ${port} is in use: the private stack needs ${ports.join(', ')} free (one left by an earlier run? stop it with AMENDS_STACK_DIR=${stackDir} scripts/stack.sh down, or pick other ports)`,
      );
    }
  }
}

/** Runs `scripts/stack.sh ARGS` (stdout and stderr kept) against a private stack's directory and ports. */
export function runStackScript(
  o: PrivateStackOptions,
  args: string[],
  budgetMs = stackCommandBudgetMs,
): Promise<StackRun> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    AMENDS_STACK: 'native',
    AMENDS_STACK_DIR: o.stackDir,
    AMENDS_STACK_KAFKA_PORT: String(o.basePort),
    AMENDS_STACK_PG_PORT: String(o.pgPort),
    // The HA database's Patroni reach etcd through the chaos run's links (etcd-links.ts).
    ...(o.database === 'ha' ? { AMENDS_STACK_HA_ETCD_LINKS: '1' } : {}),
    // Brokers that live a minute or two (and restart under the nemesis) spend most of their
    // CPU compiling: C1 alone started three in 41 core-seconds instead of 57 on 2 cores.
    AMENDS_STACK_JVM_OPTS: privateStackJvmOpts,
  };
  return new Promise((resolve) => {
    execFile(
      'bash',
      [join(packageRoot, 'scripts/stack.sh'), ...args],
      { env, timeout: budgetMs, killSignal: 'SIGKILL', maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/** The local ports the kernel hands to outgoing connections (Linux; the usual default elsewhere). */
function ephemeralPorts(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isSafeInteger(lo) && Number.isSafeInteger(hi)) return [lo as number, hi as number];
  } catch {
    // Not Linux: the IANA range.
  }
  return [49_152, 65_535];
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Every port of the stack: the brokers' three listeners each, and the database's. */
function stackPorts(o: PrivateStackOptions): number[] {
  const dbPorts = o.database === 'ha' ? haPorts(o.pgPort) : [o.pgPort];
  return [...nodePorts(o.basePort).flatMap((p) => [p, p + 1, p + 2]), ...dbPorts];
}

/** Every port of stack-ha.sh's HA database on pgPort P, with the etcd links at P+10N+2. */
function haPorts(pgPort: number): number[] {
  const offsets = [0, 1, 2, 3, 4, ...haNodes.flatMap((n) => [10 * n, 10 * n + 1, 10 * n + 2])];
  return offsets.map((o) => pgPort + o);
}

function nodePorts(basePort: number): number[] {
  return Array.from({ length: brokerCount }, (_, i) => basePort + i * nodePortStep);
}

export function lastLine(text: string): string {
  return text.trim().split('\n').pop() ?? '';
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (free: boolean) => {
      socket.destroy();
      resolve(free);
    };
    socket.setTimeout(1_000, () => done(true));
    socket.once('error', () => done(true));
    socket.connect(port, '127.0.0.1', () => done(false));
  });
}

/** A leader lookup during an election is asked again this often, this many times. */
const leaderRetryMs = 500;
const leaderAttempts = 20;

/**
 * The node id leading `topic`'s partition, asked of the cluster (kafkajs: librdkafka's admin
 * does not say); during a leader election (a broker just restarted) asked again.
 */
export async function leaderOf(brokers: string[], topic: string, partition: number): Promise<number> {
  const admin = new kafkajs.Kafka({ brokers, logLevel: kafkajs.logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
        const leader = metadata.topics[0]?.partitions.find((p) => p.partitionId === partition)?.leader;
        if (leader === undefined || leader < 1) throw new Error(`${topic}[${partition}] has no leader`);
        return leader;
      } catch (error) {
        if (attempt >= leaderAttempts) throw error;
        await sleep(leaderRetryMs);
      }
    }
  } finally {
    await admin.disconnect();
  }
}
