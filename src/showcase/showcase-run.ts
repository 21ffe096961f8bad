/**
 * The showcase's six steps (verification.md, Showcase), on fresh topics and a fresh
 * namespace, with two stock keys on two partitions and a filler load on both:
 *
 *   1. source + output topics; two workers (each behind a PostgreSQL fault proxy of ours), a
 *      relay and a view as child processes;
 *   2. before.jsonl + filler + correction.jsonl: the owner of partition 0 pauses right before
 *      the store call whose batch holds the correction (T2 rev 2) and is SIGKILLed there, then
 *      restarted with the same --instance-id;
 *   3. filler: the owner of partition 1 stops (SIGSTOP) after a poll, before its store
 *      transaction, until the group has handed the partition to the other worker (new epoch);
 *      then SIGCONT: its late process call must be fenced and write nothing;
 *   4. filler: the fault proxy of a processing worker drops one COMMIT reply (the statement
 *      committed; the reply never arrives): the worker resolves it by re-observation;
 *   5. filler: a relay with the owned fault point exits after publish and before mark; the
 *      next relay publishes those versions again and the view ignores the duplicates;
 *   6. cancel-last-day.jsonl, drain, `amendsctl verify --json`.
 *
 * Faults are placed by owned hooks (worker-fault-hooks.ts, the relay's AMENDS_FAULT, our
 * proxy), never by lucky timing; every recovery is read back from the children's logs and
 * the database, never assumed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { addDays } from '../domain/calendar-day.js';
import type { Manifest } from '../domain/config.js';
import { fillerLines } from '../domain/filler-load.js';
import { kafkaClientSettings } from '../kafka/client-settings.js';
import { withKafkaAdmin } from '../kafka/kafka-admin.js';
import { operationalError } from '../kernel/amends-error.js';
import { Database } from '../store/postgres.js';
import { storeStatementNames } from '../store/postgres-state.js';
import { relayFaultExitAfterPublish } from '../transport/outbox-relay.js';
import { bindStatementName, PgFaultProxy } from './pg-fault-proxy.js';
import { ShowcaseProbe } from './showcase-probe.js';
import {
  type ChildLogLine,
  type ChildReport,
  describeExit,
  packageRoot,
  runAmendsctl,
  type ShowcaseChild,
  ShowcaseProcesses,
  sleep,
} from './showcase-processes.js';
import type { ShowcaseTimeline } from './showcase-timeline.js';
import { faultControlVariable, pauseBeforeProcess } from './worker-fault-hooks.js';

/** Records per poll and transaction: many commits per stage, so faults meet a busy worker. */
export const showcaseBatchSize = 50;
/** Filler records per stock key, per stage. */
const fillerPerKey = { before: 400, afterCorrection: 400, stop: 1000, commitReply: 1000, relay: 400 } as const;
const firstFillerDay = '2026-03-10';
const ownersBudgetMs = 60_000;
const faultBudgetMs = 60_000;
/** The SIGSTOPped worker's session (6 s) must expire and the survivor claim: generous on a busy machine. */
const takeoverBudgetMs = 60_000;
const drainBudgetMs = 180_000;
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

interface FixtureRow {
  key: { item: string; location: string };
  value: Record<string, unknown>;
}

export async function runShowcase(setup: ShowcaseSetup): Promise<ShowcaseOutcome> {
  const { runDir, timeline, signal } = setup;
  const namespace = `showcase-${setup.runId}`;
  const topic = `amends-showcase-${setup.runId}`;
  const manifestPath = join(runDir, 'manifest.json');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AMENDS_DATABASE_URL: setup.databaseUrl,
    AMENDS_BROKERS: setup.brokers,
    // The children reach the cluster as this process does (--kafka-config or the variable).
    ...kafkaConfigEnv(),
  };
  const children = new ShowcaseProcesses(runDir, env, signal);
  const proxies: PgFaultProxy[] = [];
  const amendsctl = async (args: string[]) => {
    const r = await runAmendsctl(args, env);
    if (r.code !== 0) {
      const how = r.signal === null ? `exited ${r.code}` : `was killed by ${r.signal}`;
      throw operationalError(`amendsctl ${args[0]} ${how}: ${r.stderr.trim() || '(nothing on stderr)'}`);
    }
    return r.stdout;
  };
  const db = await Database.open(setup.databaseUrl, `amendsctl showcase ${setup.runId}`);
  try {
    return await withKafkaAdmin(setup.brokers, `amendsctl-showcase-${setup.runId}`, async (admin) => {
      // ---------------------------------------------------------------------------- 1.
      timeline.note(`step 1: topics ${topic} and ${topic}-out, namespace ${namespace}`);
      const manifestText = await amendsctl([
        'source-create',
        '--namespace',
        namespace,
        '--topic',
        topic,
        '--config',
        join(packageRoot, 'fixtures', 'two-keys.config.json'),
      ]);
      writeFileSync(manifestPath, manifestText);
      const manifest = JSON.parse(manifestText) as Manifest;
      await amendsctl(['output-create', '--manifest', manifestPath, '--topic', `${topic}-out`]);
      setup.onManifest?.(manifest, manifestPath);
      const probe = new ShowcaseProbe(
        db.pool,
        admin,
        namespace,
        { source: topic, output: `${topic}-out` },
        manifest.config.partitions,
      );
      const partitionOf = (row: FixtureRow) =>
        manifest.config.stock_keys.find((k) => k.item === row.key.item && k.location === row.key.location)?.partition ??
        -1;

      const workerNames = ['worker-a', 'worker-b'] as const;
      const workers = new Map<string, ShowcaseChild>();
      const proxyOf = new Map<string, PgFaultProxy>();
      const startWorker = (name: string, restart = 0) => {
        const child = children.start(
          restart === 0 ? name : `${name}.restart-${restart}`,
          ['worker', '--manifest', manifestPath, '--instance-id', name, '--batch-size', String(showcaseBatchSize)],
          // The worker's database traffic goes through our proxy, so one COMMIT reply can be dropped.
          { [faultControlVariable]: 'stdin', AMENDS_DATABASE_URL: proxyUrls.get(name) as string },
        );
        workers.set(name, child);
        return child;
      };
      const proxyUrls = new Map<string, string>();
      for (const name of workerNames) {
        const { proxy, url } = await PgFaultProxy.start(setup.databaseUrl);
        proxies.push(proxy);
        proxyOf.set(name, proxy);
        proxyUrls.set(name, url);
      }
      for (const name of workerNames) startWorker(name);
      let relay = children.start('relay-1', ['relay', '--manifest', manifestPath, '--instance-id', 'relay-1']);
      children.start('view-1', ['view', '--manifest', manifestPath, '--instance-id', 'view-1']);
      timeline.note(`started ${workerNames.join(', ')} (batch ${showcaseBatchSize}), relay-1, view-1`);

      const pids = () => new Map([...workers].filter(([, c]) => c.running).map(([n, c]) => [n, c.pid]));
      const waitFor = async <T>(what: string, check: () => Promise<T | undefined>, budgetMs: number): Promise<T> => {
        const deadline = Date.now() + budgetMs;
        for (;;) {
          signal.throwIfAborted();
          const dead = children.unexpectedExit();
          if (dead?.exit) {
            throw operationalError(
              `${dead.name} exited (${describeExit(dead.exit)}) while waiting for ${what}: ${dead.tail()}`,
            );
          }
          const value = await check();
          if (value !== undefined) return value;
          if (Date.now() > deadline) throw operationalError(`no ${what} within ${budgetMs / 1000} s`);
          await sleep(pollMs);
        }
      };
      const ownerOf = (partition: number) =>
        waitFor(
          `a worker processing partition ${partition}`,
          () => probe.processingOwner(partition, pids()),
          ownersBudgetMs,
        );
      await waitFor(
        'both workers processing a partition each',
        async () => {
          const [p0, p1] = await Promise.all([probe.processingOwner(0, pids()), probe.processingOwner(1, pids())]);
          return p0 !== undefined && p1 !== undefined && p0 !== p1 ? true : undefined;
        },
        ownersBudgetMs,
      );

      // Offsets are broker coordinates we can predict: fresh topics, one non-transactional
      // idempotent writer, every line in order. Each load's printed offsets are checked.
      const nextOffset = [0, 0];
      let fillerDay = 0;
      const fixture = (file: string): FixtureRow[] =>
        readFileSync(join(packageRoot, 'fixtures', file), 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as FixtureRow);
      const filler = (stage: string, perKey: number): FixtureRow[] => {
        const firstDay = addDays(firstFillerDay, fillerDay);
        fillerDay += perKey;
        const perKeyLines = manifest.config.stock_keys.map((k) =>
          fillerLines({ item: k.item, location: k.location, stage, count: perKey, firstDay }),
        );
        // Interleaved, so both partitions are busy at once.
        return (
          perKeyLines[0]?.flatMap((line, i) => [line, ...perKeyLines.slice(1).map((l) => l[i] as FixtureRow)]) ?? []
        );
      };
      const offsetsOf = (rows: FixtureRow[]) =>
        rows.map((row) => {
          const partition = partitionOf(row);
          const offset = nextOffset[partition] as number;
          nextOffset[partition] = offset + 1;
          return { partition, offset };
        });
      const load = async (name: string, rows: FixtureRow[]) => {
        const file = join(runDir, `${name}.jsonl`);
        writeFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
        const predicted = offsetsOf(rows);
        const out = await amendsctl(['source-load', '--manifest', manifestPath, '--file', file]);
        const printed = [...out.matchAll(/^line (\d+) -> partition (\d+) offset (\d+)$/gm)].map((m) => ({
          partition: Number(m[2]),
          offset: Number(m[3]),
        }));
        const differs = predicted.findIndex(
          (p, i) => printed[i]?.partition !== p.partition || printed[i]?.offset !== p.offset,
        );
        if (printed.length !== predicted.length || differs >= 0) {
          throw operationalError(`source-load of ${name}: offsets differ from the fresh topic's (line ${differs + 1})`);
        }
        timeline.note(`loaded ${name}: ${rows.length} records`);
        return predicted;
      };
      const pauseAt = async (partition: number, offset: number) => {
        const owner = await ownerOf(partition);
        const child = workers.get(owner) as ShowcaseChild;
        child.control(JSON.stringify({ fault: pauseBeforeProcess, partition, offset }));
        await child.waitForLog('fault_armed', (l) => l.msg === 'fault_armed' && l.offset === offset, faultBudgetMs);
        return { owner, child };
      };
      const atPause = (child: ShowcaseChild, partition: number, offset: number) =>
        child.waitForLog(
          `the pause before offset ${offset}`,
          (l) => l.msg === 'fault_point' && l.partition === partition && l.offset === offset,
          faultBudgetMs,
        );

      // ---------------------------------------------------------------------------- 2.
      timeline.note('step 2: SIGKILL while deciding a correction');
      const stage2 = [...fixture('before.jsonl'), ...fixture('second-key.jsonl'), ...filler('A', fillerPerKey.before)];
      const correction = fixture('correction.jsonl');
      const stage2Rest = filler('B', fillerPerKey.afterCorrection);
      const correctionOffset = (nextOffset[0] as number) + stage2.filter((r) => partitionOf(r) === 0).length;
      const killed = await pauseAt(0, correctionOffset);
      const loading2 = load('stage-2', [...stage2, ...correction, ...stage2Rest]);
      const paused = await atPause(killed.child, 0, correctionOffset);
      await killed.child.kill();
      const killFault = timeline.fault(
        'sigkill',
        `${killed.owner} at partition 0 offset ${correctionOffset}`,
        timeOf(paused),
        `${killed.owner} SIGKILLed while deciding partition 0 offset ${correctionOffset} (correction T2 rev 2, epoch ${paused.epoch})`,
      );
      startWorker(killed.owner, 1);
      await loading2;
      const afterKill = await waitFor(
        `partition 0 past offset ${correctionOffset}`,
        async () => {
          const row = (await probe.partitions()).get(0);
          return row && row.frontier > correctionOffset ? row : undefined;
        },
        takeoverBudgetMs,
      );
      const decidedOnce = await probe.decisionsAt(0, correctionOffset);
      expectOnce(decidedOnce, `partition 0 offset ${correctionOffset}`);
      timeline.recovered(
        killFault,
        `restarted with the same --instance-id; partition 0 claimed by ${afterKill.owner} at epoch ${afterKill.epoch}; offset ${correctionOffset} decided once (epoch ${decidedOnce.epochs[0]})`,
        new Date(),
      );

      // ---------------------------------------------------------------------------- 3.
      timeline.note('step 3: SIGSTOP before the store transaction, past the session timeout');
      const stage3 = filler('C', fillerPerKey.stop);
      const stopOffset = (nextOffset[1] as number) + Math.floor(stage3.filter((r) => partitionOf(r) === 1).length / 2);
      const stopped = await pauseAt(1, stopOffset);
      const loading3 = load('stage-3', stage3);
      const stopPoint = await atPause(stopped.child, 1, stopOffset);
      const staleEpoch = Number(stopPoint.epoch);
      const stopFault = timeline.fault(
        'sigstop',
        `${stopped.owner} at partition 1 offset ${stopOffset}`,
        timeOf(stopPoint),
        `${stopped.owner} stopped (SIGSTOP) after a poll, before the store transaction of partition 1 offset ${stopOffset} (epoch ${staleEpoch})`,
      );
      await loading3;
      const takeover = await waitFor(
        `a new owner of partition 1 past offset ${stopOffset}`,
        async () => {
          const row = (await probe.partitions()).get(1);
          return row && row.epoch > staleEpoch && row.frontier > stopOffset ? row : undefined;
        },
        takeoverBudgetMs,
      );
      timeline.note(`partition 1 taken over by ${takeover.owner} at epoch ${takeover.epoch}; SIGCONT ${stopped.owner}`);
      const from = stopped.child.logs.length;
      stopped.child.signal('SIGCONT');
      const fenced = await stopped.child.waitForLog(
        'the fenced late process call',
        (l) => l.msg === 'process_attempt' && l.partition === 1 && l.epoch === staleEpoch,
        faultBudgetMs,
        from,
      );
      if (fenced.observation !== 'fenced') {
        throw operationalError(
          `the late process call of ${stopped.owner} was ${String(fenced.observation)}, not fenced`,
        );
      }
      const stopDecisions = await probe.decisionsAt(1, stopOffset);
      expectOnce(stopDecisions, `partition 1 offset ${stopOffset}`);
      if (stopDecisions.epochs[0] === staleEpoch) {
        throw operationalError(`partition 1 offset ${stopOffset} was written under the stale epoch ${staleEpoch}`);
      }
      timeline.recovered(
        stopFault,
        `late process call under epoch ${staleEpoch} fenced (epoch ${takeover.epoch} owns it): nothing written; offset ${stopOffset} decided once, under epoch ${stopDecisions.epochs[0]}`,
        timeOf(fenced),
      );

      // ---------------------------------------------------------------------------- 4.
      timeline.note('step 4: one COMMIT reply dropped on the wire');
      const replyOwner = await ownerOf(0);
      const replyWorker = workers.get(replyOwner) as ShowcaseChild;
      let droppedAt: Date | undefined;
      const replyFrom = replyWorker.logs.length;
      (proxyOf.get(replyOwner) as PgFaultProxy).arm({
        when: (m) => bindStatementName(m) === storeStatementNames.commitBatch,
        action: 'drop_reply',
        onFire: () => {
          droppedAt = new Date();
        },
      });
      await load('stage-4', filler('D', fillerPerKey.commitReply));
      const unknown = await replyWorker.waitForLog(
        'the unknown commit outcome',
        (l) => l.msg === 'process_attempt' && l.observation === 'unknown',
        faultBudgetMs,
        replyFrom,
      );
      const lostPartition = Number(unknown.partition);
      const lostLast = Number(unknown.last_offset);
      const replyFault = timeline.fault(
        'commit_reply_dropped',
        `${replyOwner} partition ${lostPartition} offsets ${unknown.first_offset}–${lostLast}`,
        droppedAt ?? timeOf(unknown),
        `the COMMIT reply of ${replyOwner}'s batch ${unknown.first_offset}–${lostLast} of partition ${lostPartition} dropped by the proxy (the statement committed)`,
      );
      const reobserved = await replyWorker.waitForLog(
        'the re-observation',
        (l) => l.msg === 'store_observed' && l.partition === lostPartition,
        faultBudgetMs,
        replyFrom,
      );
      const verdict =
        reobserved.frontier === lostLast + 1 && reobserved.epoch === unknown.epoch
          ? 'committed: continued without reapplying'
          : `epoch ${reobserved.epoch}, frontier ${reobserved.frontier}`;
      timeline.recovered(
        replyFault,
        `re-observed epoch ${reobserved.epoch}, frontier ${reobserved.frontier} = last offset + 1 → ${verdict}`,
        timeOf(reobserved),
      );

      // ---------------------------------------------------------------------------- 5.
      timeline.note('step 5: the relay dies after publish, before mark');
      await relay.stop();
      const faulty = children.start(
        'relay-fault',
        ['relay', '--manifest', manifestPath, '--instance-id', 'relay-fault'],
        {
          AMENDS_FAULT: relayFaultExitAfterPublish,
        },
      );
      faulty.expectedExit = true;
      const ignoredBefore = await probe.viewIgnored();
      await load('stage-5', filler('E', fillerPerKey.relay));
      const injected = await faulty.waitForLog(
        'the relay fault point',
        (l) => l.msg === 'fault_injected',
        faultBudgetMs,
      );
      await faulty.exited;
      const republished = Number(injected.acknowledged_rows);
      const relayFault = timeline.fault(
        'relay_exit_after_publish',
        'relay-fault',
        timeOf(injected),
        `relay-fault published ${injected.acknowledged_rows} versions and died (SIGKILL) before marking them`,
      );
      relay = children.start('relay-2', ['relay', '--manifest', manifestPath, '--instance-id', 'relay-2']);
      // A second copy is a duplicate, or stale when a newer version of its day came in between.
      const ignored = await waitFor(
        'the republished versions ignored by the view',
        async () => {
          const [drain, now] = await Promise.all([probe.drain(), probe.viewIgnored()]);
          const delta = { duplicate: now.duplicate - ignoredBefore.duplicate, stale: now.stale - ignoredBefore.stale };
          return drain.relayed && drain.viewed && delta.duplicate + delta.stale >= republished ? delta : undefined;
        },
        drainBudgetMs,
      );
      timeline.recovered(
        relayFault,
        `relay-2 published the unmarked rows again; the view ignored the second copies: ${ignored.duplicate} identical duplicates, ${ignored.stale} stale (a newer version came in between)`,
        new Date(),
      );

      // ---------------------------------------------------------------------------- 6.
      timeline.note('step 6: cancel-last-day.jsonl, drain, verify');
      await load('stage-6', fixture('cancel-last-day.jsonl'));
      await waitFor(
        'the whole chain drained (decided, relayed, viewed)',
        async () => {
          const drain = await probe.drain();
          return drain.decided && drain.relayed && drain.viewed ? drain : undefined;
        },
        drainBudgetMs,
      );
      timeline.note('drained: every record decided, every version relayed and viewed');
      const verifyRun = await runAmendsctl(['verify', '--manifest', manifestPath, '--json'], env);
      let verify: Record<string, unknown>;
      try {
        verify = JSON.parse(verifyRun.stdout) as Record<string, unknown>;
      } catch {
        throw operationalError(
          `amendsctl verify exited ${verifyRun.code} without a report: ${verifyRun.stderr.trim()}`,
        );
      }
      timeline.note(`verify: ${String(verify.verdict)} (exit ${verifyRun.code})`);
      await setup.onVerdict?.(verify);
      if (setup.keepUntil) {
        timeline.note('--keep: the workers, relay and view keep running; Ctrl-C stops them');
        await setup.keepUntil;
      }
      return { manifestPath, verify, verifyExitCode: verifyRun.code ?? 1 };
    });
  } finally {
    setup.children.push(...(await children.stopAll()));
    await Promise.all(proxies.map((p) => p.close()));
    await db.close();
  }
}

function timeOf(line: ChildLogLine): Date {
  const at = typeof line.time === 'string' ? Date.parse(line.time) : Number.NaN;
  return Number.isFinite(at) ? new Date(at) : new Date();
}

function expectOnce(decisions: { count: number }, where: string): void {
  if (decisions.count !== 1) throw operationalError(`${where} has ${decisions.count} decisions, not exactly one`);
}

/** AMENDS_KAFKA_CONFIG for child processes: the installed settings' file, as an absolute path. */
function kafkaConfigEnv(): NodeJS.ProcessEnv {
  const file = kafkaClientSettings().file;
  return file === null ? {} : { AMENDS_KAFKA_CONFIG: resolve(file) };
}
