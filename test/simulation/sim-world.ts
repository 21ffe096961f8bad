/**
 * One deterministic simulation run (quality.md §1.3): several worker "processes" (real group
 * and partition actors behind createWorkerRuntime) compete for a memory topic and share a
 * memory store. Every port call becomes a pending operation; a seeded PRNG picks which one
 * completes next and with which fault, and when simulated time jumps. Nothing else is random
 * and nothing waits on real time, so a seed replays exactly.
 *
 * Faults: unknown outcomes of claim and process (committed or not), failures before commit,
 * failed reads, fences by a foreign claim, revocations delivered while a decision is in flight,
 * lost sessions of live members, crashes (the actors stop abruptly; their store calls may still
 * commit later), SIGTERM stops, restarts and new members, records produced while consuming, a
 * source observation that reports a recreated topic, and stalls that let the 20 s budget expire.
 * A calm phase follows: no faults, one more rebalance, run until every partition caught up.
 */

import type { InspectionEvent } from 'xstate';
import { sortDecisions, sortOutputVersions } from '../../src/domain/export-lines.js';
import { createWorkerRuntime, type WorkerRuntime } from '../../src/io/worker/worker-runtime.js';
import type { GroupOutput } from '../../src/machines/group-machine.js';
import { operationBudgetMs } from '../../src/machines/limits.js';
import { budgetedStateOf } from '../../src/machines/operation-deadlines.js';
import {
  type PartitionRow,
  type ProcessOutcome,
  type ProcessRequest,
  type SourceObservation,
  type SourceRecord,
  StoreFailure,
  type WorkerPorts,
} from '../../src/machines/ports.js';
import type { WorkerSummary } from '../../src/machines/worker-summary.js';
import { TestClock } from '../model/test-clock.js';
import { runOracle } from '../support/reference-oracle.js';
import { type ConsumerSession, MemoryBroker } from './memory-broker.js';
import { MemoryStore } from './memory-store.js';
import { Prng } from './prng.js';
import { caughtUpFrontier, randomTopic, type SimTopic } from './sim-history.js';

/** Limits of one run. */
const chaosStepsMin = 100;
const chaosStepsMax = 400;
const calmStepsMax = 6_000;
/** How often a step also checks each runtime's summary. */
const summaryCheckProbability = 0.02;
/** Calm steps without a frontier moving before the "operator" rebalances again. */
const calmStallSteps = 400;
const membersMax = 3;
/** Simulated time one completed operation takes, in ms. */
const opLatencyMsMax = 4;

/** Fault probabilities per step (chaos phase only). */
const faults = {
  crash: 0.004,
  stop: 0.003,
  join: 0.01,
  foreignClaim: 0.004,
  stall: 0.002,
  /** A live member's session expires: its partitions move while it may still be deciding. */
  sessionLost: 0.003,
  /** One source observation reports a recreated topic (fatal for that process). */
  sourceInvalid: 0.002,
  /** A rebalance while some member has a decision in flight, its revocation delivered at once. */
  rebalanceMidDecision: 0.01,
  /** A producer commits one more record to a random partition. */
  produce: 0.05,
  /** Per pending revocation: delivered at once, outside a poll (possibly mid-decision). */
  revokeOutsidePoll: 0.3,
};

/** Fault probabilities per completed store call (chaos phase only). */
const storeFaults = { beforeCommit: 0.05, unknownCommitted: 0.04, unknownNotCommitted: 0.03, readFailed: 0.04 };

/** A failed process exit (exit 1) is expected only for these reasons. */
const allowedFailures = new Set([
  'partition_failed:retries_exhausted',
  'partition_failed:budget_exhausted',
  'partition_failed:outcome_unresolved',
  'rebalance_budget:',
  'partition_failed:source_invalid',
  'source_invalid:',
]);

/**
 * Lets the actors react to a completed call. Promise chains from a reply to the actor's next
 * call are a few microtasks deep; whatever is left runs at the next step, deterministically
 * (no real timer or I/O is involved), so a fixed number of turns keeps runs replayable and is
 * far cheaper than a macrotask turn per step.
 */
const microtaskTurnsPerStep = 12;

async function drainMicrotasks(): Promise<void> {
  for (let i = 0; i < microtaskTurnsPerStep; i++) await Promise.resolve();
}

type OpKind = 'claim' | 'observe' | 'process' | 'source' | 'connect' | 'poll' | 'assign' | 'unassign' | 'close';

interface Op {
  seq: number;
  member: SimMember;
  kind: OpKind;
  partition: number | null;
  signal: AbortSignal;
  /** Performs the effect and replies; `chaos` allows faults. */
  run(chaos: boolean): void;
}

interface SimMember {
  id: number;
  runtime: WorkerRuntime;
  session: ConsumerSession | null;
  alive: boolean;
  exited: GroupOutput | null;
  /** Per partition: the epoch of the last claim whose reply this member received. */
  claimedEpochs: Map<number, number>;
  /** The group is riding through an outage. */
  riding: boolean;
}

/** The members of a group actor's snapshot the ride count reads. */
interface GroupSnapshotLike {
  machine?: { id: string };
  value: unknown;
}

export interface SimResult {
  seed: number;
  steps: number;
  members: number;
  crashes: number;
  failedExits: number;
  commits: number;
  rebalances: number;
  violations: string[];
  trace: string[];
  /** How often each fault and interesting interleaving happened. */
  counts: Record<string, number>;
}

export class SimWorld {
  private readonly rng: Prng;
  private readonly topic: SimTopic;
  private readonly store: MemoryStore;
  private readonly broker: MemoryBroker;
  private readonly clock = new TestClock();
  private readonly ops: Op[] = [];
  private readonly members: SimMember[] = [];
  private readonly violations: string[] = [];
  private readonly trace: string[] = [];
  private seq = 0;
  private chaos = true;
  private forceRevokeOutsidePoll = false;
  private calmSince: number | null = null;
  private crashes = 0;
  private commits = 0;

  constructor(
    private readonly seed: number,
    private readonly tracing: boolean,
  ) {
    this.rng = new Prng(seed);
    this.topic = randomTopic(this.rng);
    this.store = new MemoryStore(this.topic.config);
    this.broker = new MemoryBroker(this.topic, (_p, total) => this.rng.int(0, total));
    this.broker.onRevokePending = (session) => {
      if (!this.chaos || session.status !== 'assigned') return;
      if (!this.forceRevokeOutsidePoll && !this.rng.chance(faults.revokeOutsidePoll)) return;
      const member = this.members.find((m) => m.session === session && m.alive && m.exited === null);
      if (member === undefined) return;
      session.pendingRevoke = false;
      this.count('revocation outside a poll');
      if (this.ops.some((o) => o.member === member && o.kind === 'process')) this.count('revocation mid-decision');
      this.log(() => `m${member.id} revoke outside poll`);
      member.runtime.partitionsRevoked(false);
    };
  }

  /** Lazy: building trace lines costs more than the run itself when nobody reads them. */
  private log(line: () => string): void {
    if (this.tracing) this.trace.push(`t=${this.clock.now()} ${line()}`);
  }

  private readonly counts = new Map<string, number>();

  private count(what: string): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1);
  }

  private violate(message: string): void {
    this.violations.push(message);
    this.log(() => `VIOLATION ${message}`);
  }

  // -------------------------------------------------------------------------------------
  // Ports: every call becomes a pending operation
  // -------------------------------------------------------------------------------------

  private enqueue<T>(
    member: SimMember,
    kind: OpKind,
    partition: number | null,
    signal: AbortSignal,
    perform: (chaos: boolean, resolve: (value: T) => void, reject: (error: unknown) => void) => void,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.ops.push({
        seq: this.seq++,
        member,
        kind,
        partition,
        signal,
        run: (chaos) => perform(chaos, resolve, reject),
      });
    });
  }

  private portsFor(member: SimMember): WorkerPorts {
    const store = this.store;
    const rng = this.rng;
    const write = <T>(chaos: boolean, effect: () => T, resolve: (v: T) => void, reject: (e: unknown) => void) => {
      const roll = chaos ? rng.next() : 1;
      if (roll < storeFaults.beforeCommit) {
        reject(new StoreFailure('failed_before_commit', 'lock timeout'));
        return 'failed before commit';
      }
      if (roll < storeFaults.beforeCommit + storeFaults.unknownCommitted) {
        effect();
        reject(new StoreFailure('unknown_outcome', 'connection lost after COMMIT'));
        return 'unknown (committed)';
      }
      if (roll < storeFaults.beforeCommit + storeFaults.unknownCommitted + storeFaults.unknownNotCommitted) {
        reject(new StoreFailure('unknown_outcome', 'connection lost before COMMIT'));
        return 'unknown (not committed)';
      }
      resolve(effect());
      return 'ok';
    };
    return {
      state: {
        claim: (partition, signal) =>
          this.enqueue<PartitionRow>(member, 'claim', partition, signal, (chaos, resolve, reject) => {
            const outcome = write(
              chaos,
              () => store.claim(partition),
              (row) => {
                // Only a reply the machine can still receive may become its token: a late
                // claim result after a revocation must never be used (no install after invalidation).
                if (!signal.aborted && member.alive) member.claimedEpochs.set(partition, row.epoch);
                resolve(row);
              },
              reject,
            );
            this.count(`claim ${outcome}`);
            if (signal.aborted && outcome !== 'failed before commit') this.count('late claim after invalidation');
            this.log(
              () => `m${member.id} claim p${partition}: ${outcome} → ${JSON.stringify(store.observe(partition))}`,
            );
          }),
        observe: (partition, signal) =>
          this.enqueue<PartitionRow>(member, 'observe', partition, signal, (chaos, resolve, reject) => {
            if (chaos && rng.chance(storeFaults.readFailed)) {
              reject(new StoreFailure('failed_before_commit', 'connection refused'));
              this.log(() => `m${member.id} observe p${partition}: failed`);
              return;
            }
            resolve(store.observe(partition));
          }),
        process: (request, signal) => {
          this.checkProcessCall(member, request);
          return this.enqueue<ProcessOutcome>(
            member,
            'process',
            request.partition,
            signal,
            (chaos, resolve, reject) => {
              let result: ProcessOutcome | undefined;
              const outcome = write(
                chaos,
                () => {
                  result = store.process(request);
                  if (result.kind === 'acknowledged') this.commits++;
                  return result;
                },
                resolve,
                reject,
              );
              this.count(`process ${outcome}`);
              if (result?.kind === 'fenced') this.count('process fenced');
              if (result?.kind === 'acknowledged' && (!member.alive || signal.aborted))
                this.count('late commit of a gone caller');
              this.log(
                () =>
                  `m${member.id} process p${request.partition} [${request.records.map((r) => r.offset).join(',')}] ` +
                  `e${request.epoch} f${request.expectedFrontier}: ${outcome} ${result === undefined ? '' : JSON.stringify(result)}`,
              );
            },
          );
        },
      },
      source: {
        observe: (partitions, signal) =>
          this.enqueue<SourceObservation>(member, 'source', null, signal, (chaos, resolve) => {
            if (chaos && this.rng.chance(faults.sourceInvalid)) {
              this.count('source invalid');
              this.log(() => `m${member.id} source observation: invalid`);
              return resolve({ valid: false, reason: 'incarnation_changed', detail: 'the topic UUID changed' });
            }
            resolve({
              valid: true,
              bounds: partitions.map((partition) => ({
                partition,
                retainedStart: 0,
                readCommittedEnd: this.broker.readCommittedEnd(partition),
              })),
            });
          }),
      },
      consumer: {
        connect: (signal) =>
          this.enqueue<void>(member, 'connect', null, signal, (_chaos, resolve) => {
            member.session = this.broker.join(member.id);
            this.log(() => `m${member.id} joined`);
            resolve();
          }),
        poll: (maxRecords, signal) =>
          this.enqueue<readonly SourceRecord[]>(member, 'poll', null, signal, (_chaos, resolve) => {
            const session = member.session;
            if (session === null) return resolve([]);
            // Rebalance callbacks are served inside consume() (library-notes.md).
            if (session.pendingRevoke) {
              session.pendingRevoke = false;
              this.log(() => `m${member.id} revoke in poll${session.lost ? ' (lost)' : ''}`);
              member.runtime.partitionsRevoked(session.lost);
              return resolve([]);
            }
            if (session.pendingAssign !== null) {
              const partitions = session.pendingAssign;
              session.pendingAssign = null;
              session.status = 'assigning';
              this.log(() => `m${member.id} assigned [${partitions.join(',')}] in poll`);
              member.runtime.partitionsAssigned(partitions);
              return resolve([]);
            }
            resolve(this.broker.fetch(session, maxRecords));
          }),
        assign: (positions, signal) =>
          this.enqueue<void>(member, 'assign', null, signal, (_chaos, resolve) => {
            if (member.session !== null) this.broker.assigned(member.session, positions);
            this.log(() => `m${member.id} assign ${JSON.stringify(positions)}`);
            resolve();
          }),
        unassign: (signal) => {
          this.checkUnassignCall(member);
          return this.enqueue<void>(member, 'unassign', null, signal, (_chaos, resolve) => {
            if (member.session !== null) this.broker.unassigned(member.session);
            this.log(() => `m${member.id} unassign`);
            // librdkafka rejoins the group by itself after a lost assignment.
            if (member.session?.lost === true) member.session = this.broker.join(member.id);
            resolve();
          });
        },
        close: (signal) =>
          this.enqueue<void>(member, 'close', null, signal, (_chaos, resolve) => {
            if (member.session !== null) this.broker.leave(member.session);
            member.session = null;
            this.log(() => `m${member.id} closed`);
            resolve();
          }),
      },
    };
  }

  // -------------------------------------------------------------------------------------
  // Invariants checked where the machines call out
  // -------------------------------------------------------------------------------------

  /** Never adopt another owner's epoch; one decision in flight per process. */
  private checkProcessCall(member: SimMember, request: ProcessRequest): void {
    const claimed = member.claimedEpochs.get(request.partition);
    if (claimed !== request.epoch) {
      this.violate(
        `m${member.id} process p${request.partition} under epoch ${request.epoch}, its claim got ${claimed}`,
      );
    }
    const inFlight = this.ops.filter((o) => o.member === member && o.kind === 'process');
    if (inFlight.length > 0) this.violate(`m${member.id} started a second decision while one may still commit`);
  }

  /** A revocation or a stop waits for the in-flight decision before the partition is released. */
  private checkUnassignCall(member: SimMember): void {
    const inFlight = this.ops.filter((o) => o.member === member && o.kind === 'process' && !o.signal.aborted);
    if (inFlight.length > 0) this.violate(`m${member.id} unassigned with a decision in flight`);
  }

  // -------------------------------------------------------------------------------------
  // Members
  // -------------------------------------------------------------------------------------

  private startMember(): void {
    const id = this.members.length;
    const member: SimMember = {
      id,
      runtime: undefined as unknown as WorkerRuntime,
      session: null,
      alive: true,
      exited: null,
      claimedEpochs: new Map(),
      riding: false,
    };
    member.runtime = createWorkerRuntime({
      namespace: this.topic.config.namespace,
      batchSize: this.rng.int(1, 3),
      ports: this.portsFor(member),
      clock: this.clock,
      now: () => this.clock.now(),
      inspect: (event) => this.noteRide(member, event),
    });
    this.members.push(member);
    member.runtime.done.then(
      (output) => {
        member.exited = output;
        this.count(
          output.failure === null
            ? 'exit 0'
            : `exit 1 (${output.failure.reason}: ${output.failure.detail.split(':')[0]})`,
        );
        this.log(() => `m${id} exited ${output.exitCode} ${JSON.stringify(output.failure)}`);
        if (output.failure !== null) {
          const reason = `${output.failure.reason}:${output.failure.reason === 'partition_failed' ? output.failure.detail.split(':')[0] : ''}`;
          if (!allowedFailures.has(reason)) this.violate(`m${id} failed: ${JSON.stringify(output.failure)}`);
          // A budget that a chaos-phase stall started may still expire just after the calm began.
          const calmFor = this.calmSince === null ? 0 : this.clock.now() - this.calmSince;
          if (calmFor > operationBudgetMs)
            this.violate(`m${id} failed without faults: ${JSON.stringify(output.failure)}`);
        }
      },
      (error: unknown) => this.violate(`m${id} actor error: ${String(error)}`),
    );
    this.log(() => `m${id} started`);
    member.runtime.start();
  }

  /** Counts the group's rides through transient outages (worker.md §6) and their ends. */
  private noteRide(member: SimMember, event: InspectionEvent): void {
    const snapshot = event.type === '@xstate.snapshot' ? (event.snapshot as unknown as GroupSnapshotLike) : null;
    if (snapshot?.machine?.id !== 'group') return;
    const riding = JSON.stringify(snapshot.value).includes('riding');
    if (riding && !member.riding) this.count('ride');
    if (!riding && member.riding) this.count('ride ended');
    member.riding = riding;
  }

  /** SIGKILL: the actors stop without cleanup; the broker expires the session. */
  private crash(member: SimMember): void {
    member.alive = false;
    this.crashes++;
    member.runtime.abort();
    if (member.session !== null) this.broker.leave(member.session);
    member.session = null;
    this.log(() => `m${member.id} CRASHED`);
  }

  private running(): SimMember[] {
    return this.members.filter((m) => m.alive && m.exited === null);
  }

  // -------------------------------------------------------------------------------------
  // The run
  // -------------------------------------------------------------------------------------

  private async step(): Promise<void> {
    if (this.chaos) this.injectFaults();
    if (this.running().length === 0) this.startMember();
    const ready = this.ops.filter((o) => this.executable(o));
    const stall = this.chaos && this.rng.chance(faults.stall);
    if (ready.length > 0 && !stall) {
      const op = this.rng.pick(ready);
      this.ops.splice(this.ops.indexOf(op), 1);
      this.clock.increment(this.rng.int(0, opLatencyMsMax));
      op.run(this.chaos);
    } else {
      // Nothing can happen before the next timer: jump to it (a stall may expire a budget).
      const due = this.clock.nextDue();
      if (due !== undefined) this.clock.set(due);
    }
    this.dropDeadOps();
    await drainMicrotasks();
    if (this.rng.chance(summaryCheckProbability)) this.checkSummaries();
  }

  /** The façade's summary (what the dashboard reads) agrees with the group's own bookkeeping. */
  private checkSummaries(): void {
    for (const member of this.running()) {
      const summary = member.runtime.summary();
      const live = summary.context.partitions
        .filter((e) => e.phase !== 'retired' && e.phase !== 'failed')
        .map((e) => `partition-${e.partition}`);
      const actors = summary.partitions.map((p) => p.id).sort();
      if (JSON.stringify(actors) !== JSON.stringify(live.sort())) {
        this.violate(`m${member.id} summary shows ${actors} for live partitions ${live}`);
      }
      for (const p of summary.partitions) this.checkDeadline(member, p);
    }
  }

  /**
   * A deadline exactly while the actor is in a budgeted state, and never past: the xstate
   * delay it mirrors would have failed the actor out of that state by then.
   */
  private checkDeadline(member: SimMember, p: WorkerSummary['partitions'][number]): void {
    const left = p.deadlineAtMs === null ? null : p.deadlineAtMs - this.clock.now();
    const budgeted = budgetedStateOf(p.state) !== null;
    if (budgeted !== (left !== null) || (left !== null && (left < 0 || left > operationBudgetMs))) {
      this.violate(`m${member.id} ${p.id} in ${JSON.stringify(p.state)} has ${left} ms left of its budget`);
    }
    this.count(left === null ? 'deadline none' : 'deadline running');
  }

  /** Store calls run even for a crashed or cancelled caller: a sent transaction may still commit. */
  private executable(op: Op): boolean {
    if (op.kind === 'claim' || op.kind === 'observe' || op.kind === 'process') return true;
    return op.member.alive && !op.signal.aborted;
  }

  private dropDeadOps(): void {
    for (let i = this.ops.length - 1; i >= 0; i--) {
      const op = this.ops[i];
      if (op !== undefined && !this.executable(op)) this.ops.splice(i, 1);
    }
  }

  private injectFaults(): void {
    const running = this.running();
    if (running.length > 0 && this.rng.chance(faults.crash)) this.crash(this.rng.pick(running));
    if (running.length > 0 && this.rng.chance(faults.stop)) {
      const member = this.rng.pick(running);
      this.log(() => `m${member.id} SIGTERM`);
      member.runtime.stop('SIGTERM');
    }
    if (this.running().length < membersMax && this.rng.chance(faults.join)) this.startMember();
    if (this.rng.chance(faults.rebalanceMidDecision) && this.ops.some((o) => o.kind === 'process' && o.member.alive)) {
      // What a revocation outside consume() looks like (e.g. disconnect(), library-notes.md).
      this.forceRevokeOutsidePoll = true;
      this.broker.rebalance();
      this.forceRevokeOutsidePoll = false;
    }
    const holding = this.running().filter((m) => m.session !== null && m.session.status !== 'none');
    if (holding.length > 0 && this.rng.chance(faults.sessionLost)) {
      const member = this.rng.pick(holding);
      if (member.session !== null) {
        this.count('session lost');
        this.log(() => `m${member.id} SESSION LOST`);
        this.broker.expire(member.session);
      }
    }
    if (this.rng.chance(faults.produce)) this.broker.reveal(this.rng.int(0, this.topic.records.length - 1));
    if (this.rng.chance(faults.foreignClaim)) {
      const partition = this.rng.int(0, this.topic.records.length - 1);
      const row = this.store.claim(partition);
      this.log(() => `foreign claim p${partition} → e${row.epoch}`);
    }
  }

  /** Runs every store call whose caller can no longer receive the reply. */
  private async landLateReplies(): Promise<void> {
    for (const op of [...this.ops]) {
      const gone = !op.member.alive || op.member.exited !== null || op.signal.aborted;
      if (!gone || (op.kind !== 'claim' && op.kind !== 'observe' && op.kind !== 'process')) continue;
      this.ops.splice(this.ops.indexOf(op), 1);
      op.run(false);
    }
    await drainMicrotasks();
  }

  private caughtUp(): boolean {
    const frontiers = this.store.frontiers();
    return this.topic.records.every((records, p) => frontiers[p] === caughtUpFrontier(records));
  }

  async run(): Promise<SimResult> {
    const chaosSteps = this.rng.int(chaosStepsMin, chaosStepsMax);
    let steps = 0;
    for (; steps < chaosSteps && this.violations.length === 0; steps++) await this.step();
    // Calm: no faults. Late replies (crashed or exited callers, cancelled calls) land first.
    // A retired partition stays unowned until the next rebalance (worker.md §4.5), so the calm
    // phase plays the operator: it rebalances at its start and whenever progress stops.
    this.chaos = false;
    this.calmSince = this.clock.now();
    this.log(() => '--- calm ---');
    this.broker.revealAll();
    let calm = 0;
    let lastProgress = 0;
    let frontiers = '';
    for (; calm < calmStepsMax && !this.caughtUp() && this.violations.length === 0; calm++) {
      if (calm === lastProgress + (calm === 0 ? 0 : calmStallSteps)) {
        await this.landLateReplies();
        this.log(() => 'operator: rebalance');
        this.broker.rebalance();
        lastProgress = calm;
      }
      await this.step();
      const now = JSON.stringify(this.store.frontiers());
      if (now !== frontiers) {
        frontiers = now;
        lastProgress = calm;
      }
    }
    steps += calm;
    if (!this.caughtUp()) {
      this.violate(
        `not caught up after ${calmStepsMax} calm steps: ${this.store.frontiers()} of ${this.topic.records.map(caughtUpFrontier)}`,
      );
    }
    this.checkOutcome();
    for (const m of this.members) if (m.alive && m.exited === null) m.runtime.abort();
    return {
      seed: this.seed,
      steps,
      members: this.members.length,
      crashes: this.crashes,
      failedExits: this.members.filter((m) => m.exited !== null && m.exited.exitCode === 1).length,
      commits: this.commits,
      rebalances: this.broker.rebalances,
      violations: [...this.store.violations, ...this.violations],
      trace: this.trace,
      counts: Object.fromEntries(this.counts),
    };
  }

  /** The durable result equals the independent oracle's over each partition's decided prefix. */
  private checkOutcome(): void {
    const frontiers = this.store.frontiers();
    const prefix = this.topic.records.flatMap((records, p) => records.filter((r) => r.offset < (frontiers[p] ?? 0)));
    // Exactly one decision per visible offset below the frontier, and none above it.
    this.topic.records.forEach((records, p) => {
      const decided = [...(this.store.decisions[p]?.keys() ?? [])].sort((a, b) => a - b);
      const expected = records.filter((r) => r.offset < (frontiers[p] ?? 0)).map((r) => r.offset);
      if (JSON.stringify(decided) !== JSON.stringify(expected)) {
        this.violate(`p${p}: decided offsets ${decided} ≠ visible offsets below the frontier ${expected}`);
      }
    });
    // No duplicate version: each (key, day) counts 1, 2, 3, … in commit order.
    const counts = new Map<string, number>();
    for (const v of this.store.versions) {
      const id = JSON.stringify([v.item, v.location, v.day]);
      const next = (counts.get(id) ?? 0) + 1;
      if (v.version !== next) this.violate(`version ${v.version} of ${id} where ${next} was due`);
      counts.set(id, v.version);
    }
    const oracle = runOracle(this.topic.config, prefix);
    const withoutDetail = (ds: { detail: string | null }[]) => ds.map((d) => ({ ...d, detail: null }));
    const actual = JSON.stringify(withoutDetail(sortDecisions(this.store.allDecisions())));
    if (actual !== JSON.stringify(withoutDetail(sortDecisions(oracle.decisions)))) {
      this.violate('the committed decisions differ from the oracle');
    }
    if (
      JSON.stringify(sortOutputVersions(this.store.versions)) !== JSON.stringify(sortOutputVersions(oracle.versions))
    ) {
      this.violate('the committed output history differs from the oracle');
    }
  }
}

export async function simulate(seed: number, tracing = false): Promise<SimResult> {
  return new SimWorld(seed, tracing).run();
}
