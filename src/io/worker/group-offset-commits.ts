/**
 * Wraps a `State` so each acknowledged batch's new frontier is also committed to the
 * consumer group (docs/design.md#consumer, issue 16): the lag a team's own tools show
 * (kafka-consumer-groups, kafka_exporter, Burrow) then follows the durable decisions. The
 * commit is fired and forgotten after the store answered: it never delays a decision, and
 * its failures are only logged and counted. PostgreSQL's frontier stays the only position
 * the worker ever seeks to.
 *
 * The claimed frontiers are committed too, once the consumer is positioned at them: a
 * partition with a backlog and nothing decided yet then shows its whole lag, not "-".
 *
 * Commits are coalesced per partition (`CoalescedCommits`): at most one every
 * `groupOffsetCommitIntervalMs`, the latest frontier last. At batch size 1 every record was an
 * OffsetCommit of its own, a fifth of the broker requests of each cycle; lag tools scrape every
 * 15–60 s, so a second's delay shows nowhere.
 */
import type { SourceConsumer, State } from '../../machines/ports.js';

export type FrontierCommitter = (partition: number, frontier: number) => void;

/** The least time between two group offset commits of one partition (Kafka's own auto-commit: 5 s). */
export const groupOffsetCommitIntervalMs = 1_000;

/**
 * Sends each partition's frontier at once when its last commit is at least `intervalMs` old,
 * otherwise when that interval is up (only the latest frontier by then). `flush` sends what
 * waits, before the consumer leaves the partitions or closes.
 */
export class CoalescedCommits {
  private readonly lastSentAt = new Map<number, number>();
  private readonly waiting = new Map<number, { frontier: number; timer: NodeJS.Timeout }>();

  constructor(
    private readonly commit: FrontierCommitter,
    private readonly intervalMs = groupOffsetCommitIntervalMs,
    private readonly now: () => number = () => performance.now(),
  ) {}

  offer(partition: number, frontier: number): void {
    const queued = this.waiting.get(partition);
    if (queued !== undefined) {
      queued.frontier = frontier;
      return;
    }
    const since = this.now() - (this.lastSentAt.get(partition) ?? Number.NEGATIVE_INFINITY);
    if (since >= this.intervalMs) {
      this.send(partition, frontier);
      return;
    }
    const timer = setTimeout(() => this.sendWaiting(partition), this.intervalMs - since);
    timer.unref();
    this.waiting.set(partition, { frontier, timer });
  }

  /** Sends this frontier now (a claimed position), replacing any that waits. */
  commitNow(partition: number, frontier: number): void {
    this.cancel(partition);
    this.send(partition, frontier);
  }

  flush(): void {
    for (const partition of [...this.waiting.keys()]) this.sendWaiting(partition);
  }

  private sendWaiting(partition: number): void {
    const queued = this.waiting.get(partition);
    if (queued === undefined) return;
    this.cancel(partition);
    this.send(partition, queued.frontier);
  }

  private cancel(partition: number): void {
    const queued = this.waiting.get(partition);
    if (queued !== undefined) clearTimeout(queued.timer);
    this.waiting.delete(partition);
  }

  private send(partition: number, frontier: number): void {
    this.lastSentAt.set(partition, this.now());
    this.commit(partition, frontier);
  }
}

export function withGroupOffsetCommits(state: State, commits: Pick<CoalescedCommits, 'offer'>): State {
  return {
    claim: (partition, signal) => state.claim(partition, signal),
    observe: (partition, signal) => state.observe(partition, signal),
    async process(request, signal) {
      const outcome = await state.process(request, signal);
      if (outcome.kind === 'acknowledged') commits.offer(request.partition, outcome.frontier);
      return outcome;
    },
  };
}

/** Claimed positions go to the group at once; waiting frontiers before an unassign or a close. */
export function withPositionCommits(
  consumer: SourceConsumer,
  commits: Pick<CoalescedCommits, 'commitNow' | 'flush'>,
): SourceConsumer {
  return {
    connect: (signal) => consumer.connect(signal),
    poll: (maxRecords, signal) => consumer.poll(maxRecords, signal),
    async assign(positions, signal) {
      await consumer.assign(positions, signal);
      for (const { partition, offset } of positions) commits.commitNow(partition, offset);
    },
    unassign(signal) {
      commits.flush();
      return consumer.unassign(signal);
    },
    close(signal) {
      commits.flush();
      return consumer.close(signal);
    },
  };
}
