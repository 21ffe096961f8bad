/**
 * `amendsctl chaos` (issue 17): a private 3-broker cluster and PostgreSQL of its own
 * (private-stack.ts, under .stack/chaos), two workers, a relay and a view under a supervisor
 * (chaos-supervisor.ts), a seeded load (chaos-load.ts) and a seeded nemesis (nemesis.ts) for the
 * run's duration; then every fault healed, the chain drained, the processes stopped and
 * `amendsctl verify` run. Its verdict is the run's, except that an exit nobody caused (a
 * process that gave up within the outage budget) makes it FAIL. With `--database ha` the
 * database is Patroni's two nodes behind HAProxy (issue 33) and the database faults are
 * failovers; a write probe (write-probe.ts) measures every database fault's unavailability,
 * and the workers' logs show how each unknown commit outcome was resolved (unknown-outcomes.ts).
 *
 *   stack up ─▶ source-create (RF 3, min.insync.replicas 2) + output-create ─▶ processes
 *   ─▶ load ∥ nemesis for --duration ─▶ heal ─▶ drain (inspect until nothing lags)
 *   ─▶ SIGTERM each ─▶ verify ─▶ stack down ─▶ report
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Manifest } from '../domain/config.js';
import { packageRoot } from '../io/process/child-process.js';
import { operationalError } from '../kernel/amends-error.js';
import { errorMessage } from '../kernel/error-message.js';
import { ChaosLoad } from './chaos-load.js';
import type { ChaosReport } from './chaos-report.js';
import { type ProcessSpec, Supervisor } from './chaos-supervisor.js';
import { Nemesis } from './nemesis.js';
import { type ChaosDatabase, type ChaosProcess, planFaults } from './nemesis-plan.js';
import { PgFaultProxy } from './pg-fault-proxy.js';
import { PrivateStack, type PrivateStackOptions } from './private-stack.js';
import { runAmendsctl, ShowcaseProcesses } from './showcase-processes.js';
import { summarizeUnknownOutcomes, unknownOutcomes } from './unknown-outcomes.js';
import { WriteProbe } from './write-probe.js';

export interface ChaosOptions {
  runId: string;
  runDir: string;
  seed: number;
  durationS: number;
  outageBudgetS: number;
  recordsPerSecond: number;
  brokerPort: number;
  pgPort: number;
  database: ChaosDatabase;
  drainBudgetS: number;
  note: (line: string) => void;
  /** Ctrl-C: stop the load and the nemesis, then every process and the stack, and end ERROR. */
  signal: AbortSignal;
}

/** docs/design.md#unknown-outcomes: one store operation's budget; the database stays away longer than this. */
const operationBudgetMs = 20_000;
const batchSize = 50;
const drainPollMs = 1_000;

export async function runChaos(o: ChaosOptions, report: ChaosReport): Promise<void> {
  const stackDir = join(packageRoot, '.stack', 'chaos');
  const stackOptions = { stackDir, basePort: o.brokerPort, pgPort: o.pgPort, database: o.database };
  await freshStackDir(stackOptions, o.note);
  const database = o.database === 'ha' ? 'the HA database (Patroni, etcd, HAProxy)' : 'PostgreSQL';
  o.note(`starting a private 3-broker cluster and ${database} in ${stackDir} (ports ${o.brokerPort}, ${o.pgPort})`);
  const stack = await PrivateStack.start(stackOptions);
  const t0 = Date.now();
  const elapsedS = () => (Date.now() - t0) / 1000;
  const processes = new ShowcaseProcesses(o.runDir, baseEnv(stack), new AbortController().signal);
  let proxy: PgFaultProxy | undefined;
  let probe: WriteProbe | undefined;
  try {
    report.stack = { brokers: stack.brokers, database: `127.0.0.1:${o.pgPort}`, dir: stackDir };
    const env = baseEnv(stack);
    probe = await WriteProbe.start(stack.databaseUrl);
    const { manifest, manifestPath } = await createTopics(o, env);
    probe.track(manifest.config.namespace, manifest.config.partitions);
    const started = await PgFaultProxy.start(stack.databaseUrl);
    proxy = started.proxy;
    const supervisor = new Supervisor(processes, processSpecs(manifestPath, o.outageBudgetS, started.url), elapsedS);
    report.supervisor = supervisor.records;
    supervisor.startAll();
    const plan = planFaults(o.seed, {
      durationMs: o.durationS * 1000,
      outageBudgetMs: o.outageBudgetS * 1000,
      operationBudgetMs,
      partitions: manifest.config.partitions,
      database: o.database,
    });
    const load = new ChaosLoad({
      manifest,
      manifestPath,
      dir: o.runDir,
      env,
      seed: o.seed,
      recordsPerSecond: o.recordsPerSecond,
      elapsedS,
    });
    const nemesis = new Nemesis({
      stack,
      supervisor,
      proxy,
      probe,
      sourceTopic: manifest.source_topic,
      elapsedS,
      note: o.note,
    });
    report.faults = nemesis.faults;
    report.load = load.chunks;
    o.note(`load ${o.recordsPerSecond} records/s and ${plan.length} faults over ${o.durationS} s (seed ${o.seed})`);
    const stopLoad = new AbortController();
    const loading = load.run(stopLoad.signal);
    await nemesis.run(plan, o.signal);
    // The rest of the run's duration, cut short by an abort (thrown once the load has stopped).
    await sleep(Math.max(0, o.durationS * 1000 - (Date.now() - t0)), undefined, { signal: o.signal }).catch(() => {});
    stopLoad.abort();
    await loading;
    await nemesis.settle();
    report.load_summary = load.published();
    o.note(`${elapsedS().toFixed(1)} s: load stopped, every fault healed; draining`);
    o.signal.throwIfAborted();
    report.drain_s = await drain(manifestPath, env, o.drainBudgetS, o.note, o.signal);
    await supervisor.stopAll();
    o.note(`${elapsedS().toFixed(1)} s: processes stopped; verifying`);
    const verified = await runAmendsctl(['verify', '--manifest', manifestPath, '--json'], env);
    report.verify = parseVerify(verified.stdout, verified.stderr);
    report.unexpected_exits = supervisor.unexpectedExits().map(({ name, exit }) => ({ process: name, ...exit }));
    report.unknown_outcomes = summarizeUnknownOutcomes(
      (['worker-a', 'worker-b'] as const).flatMap((name) => unknownOutcomes(name, supervisor.logsOf(name))),
    );
  } finally {
    await processes.stopAll();
    await proxy?.close();
    await probe?.stop();
    o.note('stopping the private stack');
    await stack.stop().catch((error: unknown) => o.note(`stack down failed: ${errorMessage(error)}`));
  }
}

/**
 * A fresh directory each run (PrivateStack.freshDir: a live run there is refused, what an
 * interrupted one left running is stopped first).
 */
async function freshStackDir(o: PrivateStackOptions, note: (line: string) => void): Promise<void> {
  await PrivateStack.freshDir(o, note);
  // PostgreSQL runs as its own user: it must be able to enter every directory on the way.
  chmodSync(join(o.stackDir, '..'), 0o755);
  chmodSync(o.stackDir, 0o755);
}

function baseEnv(stack: PrivateStack): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    AMENDS_BROKERS: stack.brokers,
    AMENDS_DATABASE_URL: stack.databaseUrl,
  };
}

async function createTopics(
  o: ChaosOptions,
  env: NodeJS.ProcessEnv,
): Promise<{ manifest: Manifest; manifestPath: string }> {
  const name = `chaos-${o.runId}`;
  const must = async (args: string[]) => {
    const r = await runAmendsctl(args, env);
    if (r.code !== 0) throw operationalError(`amendsctl ${args[0]} exited ${r.code}: ${r.stderr.trim()}`);
    return r.stdout;
  };
  const config = join(packageRoot, 'fixtures', 'two-keys.config.json');
  const manifestText = await must([
    'source-create',
    '--namespace',
    name,
    '--topic',
    name,
    '--replication-factor',
    '3',
    '--config',
    config,
  ]);
  const manifestPath = join(o.runDir, 'manifest.json');
  writeFileSync(manifestPath, manifestText);
  await must(['output-create', '--manifest', manifestPath, '--topic', `${name}-out`, '--replication-factor', '3']);
  return { manifest: JSON.parse(manifestText) as Manifest, manifestPath };
}

function processSpecs(manifestPath: string, outageBudgetS: number, proxiedUrl: string): Map<ChaosProcess, ProcessSpec> {
  const common = (id: string) => [
    '--manifest',
    manifestPath,
    '--instance-id',
    id,
    '--outage-budget-s',
    String(outageBudgetS),
  ];
  return new Map<ChaosProcess, ProcessSpec>([
    // worker-a reaches PostgreSQL through the fault proxy (db-cut, commit-reply-drop).
    [
      'worker-a',
      {
        args: ['worker', ...common('chaos-worker-a'), '--batch-size', String(batchSize)],
        env: { AMENDS_DATABASE_URL: proxiedUrl },
      },
    ],
    ['worker-b', { args: ['worker', ...common('chaos-worker-b'), '--batch-size', String(batchSize)], env: {} }],
    ['relay', { args: ['relay', ...common('chaos-relay')], env: {} }],
    ['view', { args: ['view', ...common('chaos-view')], env: {} }],
  ]);
}

/**
 * Polls `amendsctl inspect --json` until every source partition's frontier is at its end,
 * nothing waits in the outbox and the view is at the output topic's end; the seconds it took,
 * or null when the budget ran out first.
 */
async function drain(
  manifestPath: string,
  env: NodeJS.ProcessEnv,
  budgetS: number,
  note: (l: string) => void,
  signal: AbortSignal,
) {
  const began = Date.now();
  let last = '';
  while (Date.now() - began < budgetS * 1000) {
    signal.throwIfAborted();
    const r = await runAmendsctl(['inspect', '--manifest', manifestPath, '--json'], env);
    if (r.code === 0) {
      const d = JSON.parse(r.stdout) as InspectDrain;
      const lags = [...d.partitions.map((p) => p.lag), ...(d.view?.partitions ?? [null]).map((p) => p?.lag ?? null)];
      last = `source lags ${d.partitions.map((p) => p.lag).join('/')}, outbox pending ${d.outbox?.pending}, view lags ${(d.view?.partitions ?? []).map((p) => p.lag).join('/')}`;
      if (lags.every((l) => l === 0) && d.outbox?.pending === 0) return (Date.now() - began) / 1000;
    } else {
      last = r.stderr.trim();
    }
    await sleep(drainPollMs);
  }
  note(`not drained within ${budgetS} s: ${last}`);
  return null;
}

interface InspectDrain {
  partitions: { lag: number | null }[];
  outbox: { pending: number } | null;
  view: { partitions: { lag: number | null }[] } | null;
}

function parseVerify(stdout: string, stderr: string): Record<string, unknown> {
  try {
    return JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    return { verdict: 'ERROR', reasons: [stderr.trim().split('\n').pop() ?? 'verify printed no document'] };
  }
}
