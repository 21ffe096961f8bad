/**
 * A private 3-broker KRaft cluster and PostgreSQL, started with `scripts/stack.sh up --brokers
 * 3` the way a user starts one, but in a stack directory of its own and on other ports, so a
 * user's stack (19092, 15432) is never touched. Node N's plaintext listener is on
 * `basePort + (N-1)*100`, its controller and SASL_SSL listeners on +1 and +2.
 *
 * Every port must be free before it starts: a cluster left on them by an earlier run would
 * otherwise be adopted by stack.sh and not be this run's to stop. `stop()` (stack.sh down)
 * stops what it started. The chaos run (chaos-run.ts) and the 3-broker test suite use it;
 * the fault helpers (a broker's pid, the database killed and started) are the chaos run's.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs from 'kafkajs';
import { packageRoot } from '../io/process/child-process.js';
import { operationalError } from '../kernel/amends-error.js';

export const brokerCount = 3;
const nodePortStep = 100;
/** Three JVMs starting at once on a 2-core machine: about 45 s when idle, more under load. */
export const clusterStartBudgetMs = 170_000;
/** The JIT's first tier only: a private stack's brokers are short-lived (see `stack`). */
const privateStackJvmOpts = '-XX:TieredStopAtLevel=1';
const stackCommandBudgetMs = 90_000;

export interface PrivateStackOptions {
  stackDir: string;
  basePort: number;
  pgPort: number;
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

  private constructor(private readonly o: PrivateStackOptions) {
    this.brokerList = nodePorts(o.basePort).map((p) => `127.0.0.1:${p}`);
    this.brokers = this.brokerList.join(',');
    this.databaseUrl = `postgres://amends:amends-local-only@127.0.0.1:${o.pgPort}/amends?sslmode=disable`;
  }

  get stackDir(): string {
    return this.o.stackDir;
  }

  /** Starts the cluster and the database; a port in use or a failed start is one line. */
  static async start(o: PrivateStackOptions): Promise<PrivateStack> {
    await requireUsablePorts([...nodePorts(o.basePort).flatMap((p) => [p, p + 1, p + 2]), o.pgPort], o.stackDir);
    const stack = new PrivateStack(o);
    const up = await stack.stack(['up', '--brokers', String(brokerCount)], clusterStartBudgetMs);
    if (up.code !== 0) {
      await stack.stack(['down']).catch(() => {});
      throw operationalError(
        `stack.sh up --brokers ${brokerCount} exited ${up.code} (logs in ${o.stackDir}): ${lastLine(up.stderr)}`,
      );
    }
    return stack;
  }

  /** Runs `scripts/stack.sh ARGS` against this stack's directory and ports. */
  stack(args: string[], budgetMs = stackCommandBudgetMs): Promise<StackRun> {
    return runStackScript(this.o, args, budgetMs);
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

  async stop(): Promise<void> {
    await this.must(['down']);
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
