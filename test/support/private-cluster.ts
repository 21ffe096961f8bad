/**
 * The 3-broker suite's private cluster: src/showcase/private-stack.ts in a temporary stack
 * directory, on AMENDS_TEST_CLUSTER_PORT (default 29092: brokers on 29092, 29192, 29292) and
 * AMENDS_TEST_CLUSTER_PG_PORT (default 25432), so neither the shared local stack nor a chaos
 * run's (27092, 27432) is touched. `stop()` stops it and removes its directory.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrivateStack } from '../../src/showcase/private-stack.js';

export { clusterStartBudgetMs } from '../../src/showcase/private-stack.js';

export interface PrivateCluster {
  /** host:port,… of the plaintext listeners. */
  brokers: string;
  brokerList: string[];
  databaseUrl: string;
  stackDir: string;
  /** Runs `stack.sh ARGS` against this cluster's directory and ports. */
  stack: PrivateStack['stack'];
  stop(): Promise<void>;
}

export async function startPrivateCluster(): Promise<PrivateCluster> {
  // The database runs as the postgres user: it must be able to enter the directory.
  const parent = mkdtempSync(join(tmpdir(), 'amends-test-cluster-'));
  chmodSync(parent, 0o755);
  const stack = await PrivateStack.start({
    stackDir: join(parent, '.stack'),
    basePort: Number(process.env.AMENDS_TEST_CLUSTER_PORT ?? 29092),
    pgPort: Number(process.env.AMENDS_TEST_CLUSTER_PG_PORT ?? 25432),
  });
  return {
    brokers: stack.brokers,
    brokerList: stack.brokerList,
    databaseUrl: stack.databaseUrl,
    stackDir: stack.stackDir,
    stack: (args, budgetMs) => stack.stack(args, budgetMs),
    stop: async () => {
      await stack.stop();
      rmSync(parent, { recursive: true, force: true });
    },
  };
}
