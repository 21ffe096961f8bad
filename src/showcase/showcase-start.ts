/**
 * The showcase's step 1 (docs/design.md#showcase): fresh source and output topics and a
 * fresh namespace (two stock keys on two partitions); two workers, each behind a PostgreSQL
 * fault proxy of ours, a relay and a view as child processes; done once each worker
 * processes a partition of its own.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest } from '../domain/config.js';
import type { KafkaAdmin } from '../io/kafka/kafka-admin.js';
import { packageRoot } from '../io/process/child-process.js';
import type { Queryable } from '../io/store/postgres.js';
import { PgFaultProxy } from './pg-fault-proxy.js';
import {
  amendsctlStdout,
  ShowcaseContext,
  type ShowcaseSetup,
  showcaseBatchSize,
  type WorkerProxy,
} from './showcase-context.js';
import { ShowcaseLoads } from './showcase-loads.js';
import { ShowcaseProbe } from './showcase-probe.js';
import type { ShowcaseProcesses } from './showcase-processes.js';

const workerNames = ['worker-a', 'worker-b'] as const;

/** What the showcase holds before step 1; `proxies` collects every proxy started, for closing. */
export interface ShowcaseBase {
  setup: ShowcaseSetup;
  env: NodeJS.ProcessEnv;
  children: ShowcaseProcesses;
  proxies: PgFaultProxy[];
  db: Queryable;
  admin: KafkaAdmin;
}

export async function startShowcase(base: ShowcaseBase): Promise<ShowcaseContext> {
  const { setup, env } = base;
  const namespace = `showcase-${setup.runId}`;
  const topic = `amends-showcase-${setup.runId}`;
  const manifestPath = join(setup.runDir, 'manifest.json');
  setup.timeline.note(`step 1: topics ${topic} and ${topic}-out, namespace ${namespace}`);
  const manifest = await createTopics(namespace, topic, manifestPath, env);
  setup.onManifest?.(manifest, manifestPath);
  const probe = new ShowcaseProbe(
    base.db,
    base.admin,
    namespace,
    { source: topic, output: `${topic}-out` },
    manifest.config.partitions,
  );
  const proxies = new Map<string, WorkerProxy>();
  for (const name of workerNames) {
    const started = await PgFaultProxy.start(setup.databaseUrl);
    base.proxies.push(started.proxy);
    proxies.set(name, started);
  }
  const loads = new ShowcaseLoads(manifest, manifestPath, setup.runDir, env, setup.timeline);
  const run = new ShowcaseContext(setup, env, base.children, manifestPath, probe, loads, proxies);
  for (const name of workerNames) run.startWorker(name);
  run.relay = run.children.start('relay-1', ['relay', '--manifest', manifestPath, '--instance-id', 'relay-1']);
  run.children.start('view-1', ['view', '--manifest', manifestPath, '--instance-id', 'view-1']);
  setup.timeline.note(`started ${workerNames.join(', ')} (batch ${showcaseBatchSize}), relay-1, view-1`);
  await run.waitForOwnerEach();
  return run;
}

/** `amendsctl source-create` (the manifest, written to `manifestPath`) and `output-create`. */
async function createTopics(
  namespace: string,
  topic: string,
  manifestPath: string,
  env: NodeJS.ProcessEnv,
): Promise<Manifest> {
  const config = join(packageRoot, 'fixtures', 'two-keys.config.json');
  const manifestText = await amendsctlStdout(
    ['source-create', '--namespace', namespace, '--topic', topic, '--config', config],
    env,
  );
  writeFileSync(manifestPath, manifestText);
  const manifest = JSON.parse(manifestText) as Manifest;
  await amendsctlStdout(['output-create', '--manifest', manifestPath, '--topic', `${topic}-out`], env);
  return manifest;
}
