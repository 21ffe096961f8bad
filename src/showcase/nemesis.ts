/**
 * The chaos run's nemesis: injects the planned faults (nemesis-plan.ts) at their offsets and
 * heals each, recording when it really injected and healed and what it hit. Faults run one
 * after the other; only a killed broker's restart (a JVM start, tens of seconds) goes on
 * beside the next faults, and no broker fault starts before it is done.
 *
 *   process-kill       SIGKILL; healed when the supervisor has started it again
 *   process-pause      SIGSTOP for the hold, then SIGCONT
 *   broker-kill        SIGKILL of the broker leading a source partition; after the hold it is
 *                      started again (stack.sh up --kafka-only)
 *   db-restart         PostgreSQL stopped at once (a crash) and started again
 *   db-away            the same, started again only after the hold
 *   db-cut             every connection of worker-a cut, new ones refused, for the hold
 *   commit-reply-drop  the reply to worker-a's next batch COMMIT swallowed on the wire
 *                      (the commit happens; the worker cannot know): healed when it fires
 *   primary-kill, switchover, primary-isolated
 *                      the HA database's failovers (nemesis-failover.ts); the old primary's
 *                      rejoin goes on beside the next faults, as a broker's restart does
 *
 * A database fault (a crash, an absence, a failover) opens a write measurement when it
 * strikes (write-probe.ts): fault → the first commit after it, and amends' own first commit.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { storeStatementNames } from '../io/store/sql/statement-names.js';
import { operationalError } from '../kernel/amends-error.js';
import { errorMessage } from '../kernel/error-message.js';
import type { Supervisor } from './chaos-supervisor.js';
import { type FailoverRecord, Failovers } from './nemesis-failover.js';
import type { ChaosProcess, PlannedFault } from './nemesis-plan.js';
import type { PgFaultProxy } from './pg-fault-proxy.js';
import { bindStatementName } from './pg-fault-proxy.js';
import { leaderOf, type PrivateStack } from './private-stack.js';
import type { WriteMeasure, WriteProbe } from './write-probe.js';

export interface FaultRecord extends PlannedFault {
  /** Seconds from the start of the load; null when it was not injected. */
  injected_s: number | null;
  healed_s: number | null;
  /** What it hit, e.g. `broker 2 (leader of partition 0)`. */
  detail: string;
  error: string | null;
  /** A database fault's write unavailability (write-probe.ts); null for the others. */
  writes: WriteMeasure | null;
  /** A failover's nodes and moments (nemesis-failover.ts); null for the others. */
  failover: FailoverRecord | null;
}

export interface NemesisDeps {
  stack: PrivateStack;
  supervisor: Supervisor;
  proxy: PgFaultProxy;
  probe: WriteProbe;
  sourceTopic: string;
  elapsedS: () => number;
  note: (line: string) => void;
}

const restartRetryMs = 3_000;
/** How long a dropped COMMIT reply may wait for worker-a's next commit before it is given up. */
const commitDropWaitMs = 15_000;

export class Nemesis {
  readonly faults: FaultRecord[] = [];
  private brokerRestart: Promise<void> = Promise.resolve();
  /** False after a killed broker failed to start again: no other broker is killed until it runs. */
  private brokersWhole = true;
  private readonly failovers: Failovers | undefined;

  constructor(private readonly d: NemesisDeps) {
    const ha = d.stack.ha;
    this.failovers =
      ha === undefined ? undefined : new Failovers({ ha, probe: d.probe, elapsedS: d.elapsedS, note: d.note });
  }

  /** Injects and heals `plan` in order; stops early (healing what it holds) when `signal` fires. */
  async run(plan: readonly PlannedFault[], signal: AbortSignal): Promise<void> {
    for (const planned of plan) {
      const wait = planned.at_ms - this.d.elapsedS() * 1000;
      if (wait > 0) await sleep(wait);
      if (signal.aborted) break;
      if (planned.kind === 'broker-kill') await this.brokerRestart;
      const record: FaultRecord = {
        ...planned,
        injected_s: null,
        healed_s: null,
        detail: '',
        error: null,
        writes: null,
        failover: null,
      };
      this.faults.push(record);
      try {
        await this.inject(record);
      } catch (error) {
        record.error = errorMessage(error).split('\n', 1)[0] ?? 'failed';
        this.d.note(`fault ${record.n} ${record.kind}: ${record.error}`);
      }
    }
  }

  /** Waits for heals still under way (a broker's restart, an old primary's rejoin). */
  async settle(): Promise<void> {
    await this.brokerRestart;
    await this.failovers?.settle();
  }

  private async inject(f: FaultRecord): Promise<void> {
    const mark = (what: 'injected' | 'healed') => {
      const at = this.d.elapsedS();
      if (what === 'injected') f.injected_s = at;
      else f.healed_s = at;
      this.d.note(`${at.toFixed(1).padStart(6)} s  fault ${f.n} ${f.kind} ${what}: ${f.detail}`);
    };
    switch (f.kind) {
      case 'process-kill': {
        const name = f.target as ChaosProcess;
        f.detail = `SIGKILL ${name}`;
        const restarted = this.d.supervisor.kill(name, `fault ${f.n}`);
        mark('injected');
        await restarted;
        mark('healed');
        return;
      }
      case 'process-pause': {
        const name = f.target as ChaosProcess;
        f.detail = `SIGSTOP ${name} for ${(f.hold_ms / 1000).toFixed(1)} s`;
        this.d.supervisor.signal(name, 'SIGSTOP');
        mark('injected');
        await sleep(f.hold_ms);
        this.d.supervisor.signal(name, 'SIGCONT');
        mark('healed');
        return;
      }
      case 'broker-kill':
        return this.killBroker(f, mark);
      case 'db-restart':
      case 'db-away': {
        f.detail = `PostgreSQL stopped at once${f.kind === 'db-away' ? ` for ${(f.hold_ms / 1000).toFixed(1)} s` : ', then started'}`;
        const struckMs = Date.now();
        await this.d.stack.killDatabase();
        f.writes = this.d.probe.measure({ struckMs, afterMs: Date.now() });
        mark('injected');
        if (f.hold_ms > 0) await sleep(f.hold_ms);
        await this.d.stack.startDatabase();
        mark('healed');
        return;
      }
      case 'db-cut':
        f.detail = `worker-a's connections cut, new ones refused, for ${(f.hold_ms / 1000).toFixed(1)} s`;
        mark('injected');
        await this.d.proxy.outage(f.hold_ms);
        mark('healed');
        return;
      case 'commit-reply-drop':
        return this.dropCommitReply(f, mark);
      case 'primary-kill':
      case 'switchover':
      case 'primary-isolated':
        if (this.failovers === undefined) throw operationalError(`${f.kind} needs the HA database (--database ha)`);
        return this.failovers.inject(f, mark);
    }
  }

  private async killBroker(f: FaultRecord, mark: (what: 'injected' | 'healed') => void): Promise<void> {
    // Two brokers down would be a fault the plan does not make (min.insync.replicas 2 of 3).
    if (!this.brokersWhole) {
      await this.d.stack.startBrokers();
      this.brokersWhole = true;
    }
    const partition = Number(f.target.replace('partition ', ''));
    const leader = await leaderOf(this.d.stack.brokerList, this.d.sourceTopic, partition);
    f.detail = `broker ${leader} (leader of source partition ${partition}) SIGKILLed, restarted after ${(f.hold_ms / 1000).toFixed(1)} s`;
    process.kill(this.d.stack.brokerPid(leader), 'SIGKILL');
    mark('injected');
    await sleep(f.hold_ms);
    this.brokersWhole = false;
    this.brokerRestart = this.restartBrokers().then(
      () => {
        this.brokersWhole = true;
        mark('healed');
      },
      (error: unknown) => {
        f.error = `restart: ${errorMessage(error)}`;
        this.d.note(`fault ${f.n} broker-kill: ${f.error}`);
      },
    );
  }

  /** Starts the killed broker, a second time after a pause if the first start fails. */
  private async restartBrokers(): Promise<void> {
    try {
      await this.d.stack.startBrokers();
    } catch (error) {
      this.d.note(`broker restart failed, trying again: ${errorMessage(error)}`);
      await sleep(restartRetryMs);
      await this.d.stack.startBrokers();
    }
  }

  private async dropCommitReply(f: FaultRecord, mark: (what: 'injected' | 'healed') => void): Promise<void> {
    f.detail = "the reply to worker-a's next batch COMMIT swallowed (the commit happens)";
    let fired: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      fired = resolve;
    });
    this.d.proxy.arm({
      when: (m) => bindStatementName(m) === storeStatementNames.commitBatch,
      action: 'drop_reply',
      onFire: () => {
        mark('healed');
        fired();
      },
    });
    mark('injected');
    // The next faults do not wait for a commit that may not come (worker-a paused, say);
    // it stays armed and is marked healed whenever it fires.
    await Promise.race([done, sleep(commitDropWaitMs)]);
  }
}
