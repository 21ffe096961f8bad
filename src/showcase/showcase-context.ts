/**
 * What the showcase's steps share (docs/design.md#showcase; the steps are in
 * showcase-run.ts): the setup, the children, the probe, the loads, and the few moves every
 * fault step makes: wait for a condition while watching the children, find who processes a
 * partition, arm a worker's pause before one offset and see it reached.
 */
import type { Manifest } from '../domain/config.js';
import { pollUntil } from '../io/process/poll-until.js';
import { operationalError } from '../kernel/amends-error.js';
import type { PgFaultProxy } from './pg-fault-proxy.js';
import type { ShowcaseLoads } from './showcase-loads.js';
import type { ShowcaseProbe } from './showcase-probe.js';
import {
  type ChildLogLine,
  type ChildReport,
  describeExit,
  faultableWorkerEntry,
  runAmendsctl,
  type ShowcaseChild,
  type ShowcaseProcesses,
} from './showcase-processes.js';
import type { ShowcaseTimeline } from './showcase-timeline.js';
import { faultControlVariable, pauseBeforeProcess } from './worker-fault-hooks.js';

/** Records per poll and transaction: many commits per stage, so faults meet a busy worker. */
export const showcaseBatchSize = 50;
const ownersBudgetMs = 60_000;
export const faultBudgetMs = 60_000;
/** The SIGSTOPped worker's session (6 s) must expire and the survivor claim: generous on a busy machine. */
export const takeoverBudgetMs = 60_000;
export const drainBudgetMs = 180_000;
const pollMs = 100;

export interface ShowcaseSetup {
  runId: string;
  runDir: string;
  databaseUrl: string;
  brokers: string;
  timeline: ShowcaseTimeline;
  /** Told once the manifest exists (the dashboard starts then). */
  onManifest?: (manifest: Manifest, manifestPath: string) => void;
  /** Told the verdict while every child still runs (the dashboard shows it on live rows). */
  onVerdict?: (verify: Record<string, unknown>) => Promise<void>;
  /** --keep: wait here (children running) until this resolves. */
  keepUntil?: Promise<void>;
  signal: AbortSignal;
  /** Filled on every exit path: each child started and how it ended. */
  children: ChildReport[];
}

export interface ShowcaseOutcome {
  manifestPath: string;
  verify: Record<string, unknown>;
  verifyExitCode: number;
}

/** A worker's PostgreSQL fault proxy and the database URL the worker is given for it. */
export interface WorkerProxy {
  proxy: PgFaultProxy;
  url: string;
}

export class ShowcaseContext {
  /** The current child of each worker name (a restart replaces it). */
  readonly workers = new Map<string, ShowcaseChild>();
  /** The relay now running (step 5 replaces it). */
  relay: ShowcaseChild | undefined;

  constructor(
    readonly setup: ShowcaseSetup,
    /** The children's environment. */
    readonly env: NodeJS.ProcessEnv,
    readonly children: ShowcaseProcesses,
    readonly manifestPath: string,
    readonly probe: ShowcaseProbe,
    readonly loads: ShowcaseLoads,
    readonly proxies: ReadonlyMap<string, WorkerProxy>,
  ) {}

  get timeline(): ShowcaseTimeline {
    return this.setup.timeline;
  }

  /** Starts worker `name` (or its `restart`th restart, same --instance-id) behind its proxy, faults armable. */
  startWorker(name: string, restart = 0): ShowcaseChild {
    const child = this.children.start(
      restart === 0 ? name : `${name}.restart-${restart}`,
      ['worker', '--manifest', this.manifestPath, '--instance-id', name, '--batch-size', String(showcaseBatchSize)],
      // The worker's database traffic goes through our proxy, so one COMMIT reply can be dropped.
      { [faultControlVariable]: 'stdin', AMENDS_DATABASE_URL: this.proxies.get(name)?.url as string },
      faultableWorkerEntry,
    );
    this.workers.set(name, child);
    return child;
  }

  /** The running workers' process ids, by name: a heartbeat counts only from the current process. */
  pids(): Map<string, number> {
    return new Map([...this.workers].filter(([, c]) => c.running).map(([n, c]) => [n, c.pid]));
  }

  /** Polls `check` until it yields a value; fails when a child dies unasked or the budget ends. */
  waitFor<T>(what: string, check: () => Promise<T | undefined>, budgetMs: number): Promise<T> {
    // A child that died unasked fails the wait before the read, even one that would succeed.
    const checkWhileAlive = (): Promise<T | undefined> => {
      const dead = this.children.unexpectedExit();
      if (dead?.exit) {
        throw operationalError(
          `${dead.name} exited (${describeExit(dead.exit)}) while waiting for ${what}: ${dead.tail()}`,
        );
      }
      return check();
    };
    return pollUntil(what, checkWhileAlive, { budgetMs, pollMs, signal: this.setup.signal });
  }

  ownerOf(partition: number): Promise<string> {
    return this.waitFor(
      `a worker processing partition ${partition}`,
      () => this.probe.processingOwner(partition, this.pids()),
      ownersBudgetMs,
    );
  }

  waitForOwnerEach(): Promise<true> {
    return this.waitFor(
      'both workers processing a partition each',
      async () => {
        const pids = this.pids();
        const [p0, p1] = await Promise.all([this.probe.processingOwner(0, pids), this.probe.processingOwner(1, pids)]);
        return p0 !== undefined && p1 !== undefined && p0 !== p1 ? true : undefined;
      },
      ownersBudgetMs,
    );
  }

  /** Arms a pause before `offset` of `partition` in the worker processing it; resolves once armed. */
  async pauseAt(partition: number, offset: number): Promise<{ owner: string; child: ShowcaseChild }> {
    const owner = await this.ownerOf(partition);
    const child = this.workers.get(owner) as ShowcaseChild;
    child.control(JSON.stringify({ fault: pauseBeforeProcess, partition, offset }));
    await child.waitForLog('fault_armed', (l) => l.msg === 'fault_armed' && l.offset === offset, faultBudgetMs);
    return { owner, child };
  }

  /** The worker's log line saying it has reached the armed pause. */
  atPause(child: ShowcaseChild, partition: number, offset: number): Promise<ChildLogLine> {
    return child.waitForLog(
      `the pause before offset ${offset}`,
      (l) => l.msg === 'fault_point' && l.partition === partition && l.offset === offset,
      faultBudgetMs,
    );
  }
}

/** `amendsctl <args>`'s stdout; anything but exit 0 fails the showcase with its stderr. */
export async function amendsctlStdout(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const r = await runAmendsctl(args, env);
  if (r.code !== 0) {
    const how = r.signal === null ? `exited ${r.code}` : `was killed by ${r.signal}`;
    throw operationalError(`amendsctl ${args[0]} ${how}: ${r.stderr.trim() || '(nothing on stderr)'}`);
  }
  return r.stdout;
}

/** When a child logged the line (its own clock), or now when it has no time. */
export function timeOf(line: ChildLogLine): Date {
  const at = typeof line.time === 'string' ? Date.parse(line.time) : Number.NaN;
  return Number.isFinite(at) ? new Date(at) : new Date();
}

export function expectOnce(decisions: { count: number }, where: string): void {
  if (decisions.count !== 1) throw operationalError(`${where} has ${decisions.count} decisions, not exactly one`);
}
