/**
 * A private 3-broker KRaft cluster and PostgreSQL, started with `scripts/stack.sh up
 * --brokers 3` the way a user starts one, but in a stack directory of its own and on other
 * ports, so the shared local stack (19092, 15432) is never touched. Ports:
 * AMENDS_TEST_CLUSTER_PORT (default 29092: brokers on 29092, 29192, 29292, their controller
 * and SASL_SSL listeners on +1 and +2) and AMENDS_TEST_CLUSTER_PG_PORT (default 25432).
 *
 * Every port must be free before it starts: a cluster left on them by an earlier run would
 * otherwise be adopted by stack.sh and not be this run's to stop. The caller stops it
 * with `stop()` (stack.sh down), which also removes its directory.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, runChild } from './amendsctl-process.js';

const brokerCount = 3;
const nodePortStep = 100;
/** Three JVMs starting at once on a 2-core machine: about 45 s when idle, more under load. */
export const clusterStartBudgetMs = 170_000;
const clusterStopBudgetMs = 60_000;

export interface PrivateCluster {
  /** host:port,… of the plaintext listeners. */
  brokers: string;
  brokerList: string[];
  databaseUrl: string;
  stackDir: string;
  /** Runs `stack.sh ARGS` against this cluster's directory and ports. */
  stack(args: string[], budgetMs?: number): Promise<StackRun>;
  stop(): Promise<void>;
}

export interface StackRun {
  code: number | null;
  stderr: string;
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

function runStack(args: string[], env: Record<string, string>, budgetMs: number): Promise<StackRun> {
  return runChild('bash', [join(repoRoot, 'scripts/stack.sh'), ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    timeoutMs: budgetMs,
    label: `stack.sh ${args.join(' ')}`,
  });
}

export async function startPrivateCluster(): Promise<PrivateCluster> {
  const basePort = Number(process.env.AMENDS_TEST_CLUSTER_PORT ?? 29092);
  const pgPort = Number(process.env.AMENDS_TEST_CLUSTER_PG_PORT ?? 25432);
  const nodePorts = Array.from({ length: brokerCount }, (_, i) => basePort + i * nodePortStep);
  // Plaintext, controller and SASL_SSL listener of each node, and the database.
  const ports = [...nodePorts.flatMap((p) => [p, p + 1, p + 2]), pgPort];
  for (const port of ports) {
    if (!(await portFree(port))) {
      throw new Error(
        `port ${port} is in use: the private test cluster needs ${ports.join(', ')} free (a cluster left by an earlier run? stop it, or set AMENDS_TEST_CLUSTER_PORT / AMENDS_TEST_CLUSTER_PG_PORT)`,
      );
    }
  }
  // The database runs as the postgres user: it must be able to enter the directory.
  const parent = mkdtempSync(join(tmpdir(), 'amends-test-cluster-'));
  chmodSync(parent, 0o755);
  const stackDir = join(parent, '.stack');
  const env = {
    AMENDS_STACK: 'native',
    AMENDS_STACK_DIR: stackDir,
    AMENDS_STACK_KAFKA_PORT: String(basePort),
    AMENDS_STACK_PG_PORT: String(pgPort),
  };
  const stack = (args: string[], budgetMs = clusterStopBudgetMs) => runStack(args, env, budgetMs);
  const stop = async () => {
    const down = await stack(['down']);
    if (down.code !== 0) throw new Error(`stack.sh down exited ${down.code}: ${down.stderr}`);
    rmSync(parent, { recursive: true, force: true });
  };
  const up = await runStack(['up', '--brokers', String(brokerCount)], env, clusterStartBudgetMs).catch(
    async (error: unknown) => {
      await stack(['down']).catch(() => {});
      throw error;
    },
  );
  if (up.code !== 0) {
    await stack(['down']).catch(() => {});
    throw new Error(`stack.sh up --brokers ${brokerCount} exited ${up.code} (logs kept in ${stackDir}): ${up.stderr}`);
  }
  const brokerList = nodePorts.map((p) => `127.0.0.1:${p}`);
  return {
    brokers: brokerList.join(','),
    brokerList,
    databaseUrl: `postgres://amends:amends-local-only@127.0.0.1:${pgPort}/amends?sslmode=disable`,
    stackDir,
    stack,
    stop,
  };
}
