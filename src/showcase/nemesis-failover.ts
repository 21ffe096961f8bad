/**
 * The nemesis's failovers of the HA database (issue 33; nemesis-plan.ts plans them):
 *
 *   primary-kill      SIGKILL of the primary's postmaster: Patroni sees its PostgreSQL gone
 *                     and the synchronous standby is promoted
 *   switchover        patronictl switchover to the synchronous standby (a planned one)
 *   primary-isolated  the primary cut off from etcd and from its clients for the hold
 *                     (ha-control.ts): its Patroni cannot renew the leader key and demotes it
 *                     after retry_timeout, the key expires after ttl and the standby is
 *                     promoted; then it is reconnected and rejoins
 *
 * Each records which node was primary, when Patroni first said it no longer ran as one
 * (crashed, stopping, demoted), when the other node ran as primary, and when the old one was
 * back as its synchronous standby with HAProxy routing to both: a kill and a switchover are
 * healed then, a cut-off primary when it is reconnected. That rejoin goes on beside the next
 * faults, and the next failover waits for it (it needs a synchronous standby to fail over to).
 * Each opens a write measurement (write-probe.ts) at the moment it strikes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { operationalError } from '../kernel/amends-error.js';
import { errorMessage } from '../kernel/error-message.js';
import { describeHa, type HaControl, type HaNode, portOf } from './ha-control.js';
import type { FaultRecord } from './nemesis.js';
import type { WriteProbe } from './write-probe.js';

export interface FailoverRecord {
  /** The primary when the fault struck, `node-N`. */
  from: string;
  /** The node that ran as primary next; null while none did. */
  to: string | null;
  /** Seconds from the start of the load when Patroni first said the old primary no longer ran as one. */
  demoted_s: number | null;
  /** When the other node first ran as primary. */
  promoted_s: number | null;
  /** When the old primary was the new one's synchronous standby again, HAProxy routing to both. */
  rejoined_s: number | null;
}

export interface FailoverDeps {
  ha: HaControl;
  probe: WriteProbe;
  elapsedS: () => number;
  note: (line: string) => void;
}

/** A failover's promotion is waited for this long (a cut-off primary is held at least until it). */
const promotionBudgetMs = 30_000;
/** The old primary's rejoin (pg_rewind or a new clone, a restart) is waited for this long. */
const rejoinBudgetMs = 120_000;
/** Before a failover: a synchronous standby to fail over to, this long at most. */
const wholeBudgetMs = 60_000;
const rolePollMs = 250;

type Mark = (what: 'injected' | 'healed') => void;

export class Failovers {
  /** The last failover's rejoin, under way beside the next faults. */
  private rejoining: Promise<void> = Promise.resolve();

  constructor(private readonly d: FailoverDeps) {}

  /** Waits for the last failover's rejoin. */
  async settle(): Promise<void> {
    await this.rejoining;
  }

  async inject(f: FaultRecord, mark: Mark): Promise<void> {
    await this.rejoining;
    const { whole, status } = await this.d.ha.waitWhole(wholeBudgetMs);
    if (!whole) {
      throw operationalError(
        `no synchronous standby to fail over to after ${wholeBudgetMs / 1000} s: ${describeHa(status)}`,
      );
    }
    const before = status.nodes.find((n) => n.role === 'primary') as HaNode;
    const other = status.nodes.find((n) => n.role === 'sync-standby') as HaNode;
    const failover: FailoverRecord = {
      from: before.name,
      to: null,
      demoted_s: null,
      promoted_s: null,
      rejoined_s: null,
    };
    f.failover = failover;
    const struckMs = Date.now();
    if (f.kind === 'primary-kill') {
      const pid = this.d.ha.killPostmaster(before);
      f.detail = `SIGKILL of ${before.name}'s postmaster (pid ${pid}), the primary`;
    } else if (f.kind === 'primary-isolated') {
      await this.d.ha.isolate(before);
      f.detail = `${before.name}, the primary, cut off from etcd and from HAProxy for ${(f.hold_ms / 1000).toFixed(1)} s`;
    } else {
      f.detail = `patronictl switchover from ${before.name} to ${other.name}`;
    }
    f.writes = this.d.probe.measure({ struckMs, notPort: portOf(before) });
    mark('injected');
    const promoted = this.watch(failover, before, other);
    if (f.kind === 'switchover') await this.d.ha.switchover();
    if (f.kind === 'primary-isolated') {
      // Cut off at least for the hold, and until the other node is primary: a reconnect
      // before the promotion would give the old primary its leader key back.
      await Promise.all([sleep(f.hold_ms), promoted]);
      await this.d.ha.reconnect(before);
      mark('healed');
    }
    this.rejoining = this.rejoin(f, failover, promoted, f.kind !== 'primary-isolated' ? mark : undefined);
  }

  /** Polls both nodes' Patroni until the other node runs as primary (or the budget ends). */
  private async watch(failover: FailoverRecord, before: HaNode, other: HaNode): Promise<void> {
    const deadline = Date.now() + promotionBudgetMs;
    while (Date.now() < deadline) {
      const [old, next] = await Promise.all([this.d.ha.patroniState(before), this.d.ha.patroniState(other)]);
      if (failover.demoted_s === null && old !== null && old !== 'master/running')
        failover.demoted_s = this.d.elapsedS();
      if (next === 'master/running') {
        failover.promoted_s = this.d.elapsedS();
        failover.to = other.name;
        return;
      }
      await sleep(rolePollMs);
    }
  }

  private async rejoin(f: FaultRecord, failover: FailoverRecord, promoted: Promise<void>, mark?: Mark): Promise<void> {
    try {
      await promoted;
      if (failover.to === null) throw operationalError(`no node ran as primary within ${promotionBudgetMs / 1000} s`);
      const { whole, status } = await this.d.ha.waitWhole(rejoinBudgetMs);
      if (!whole) {
        throw operationalError(
          `${failover.from} was not back as the synchronous standby within ${rejoinBudgetMs / 1000} s: ${describeHa(status)}`,
        );
      }
      failover.rejoined_s = this.d.elapsedS();
      mark?.('healed');
    } catch (error) {
      f.error = errorMessage(error).split('\n', 1)[0] ?? 'failed';
      this.d.note(`fault ${f.n} ${f.kind}: ${f.error}`);
    }
  }
}
