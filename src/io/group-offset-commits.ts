/**
 * Wraps a `State` so each acknowledged batch's new frontier is also committed to the
 * consumer group (worker.md §3, issue 16): the lag a team's own tools show
 * (kafka-consumer-groups, kafka_exporter, Burrow) then follows the durable decisions. The
 * commit is fired and forgotten after the store answered: it never delays a decision, and
 * its failures are only logged and counted. PostgreSQL's frontier stays the only position
 * the worker ever seeks to.
 *
 * The claimed frontiers are committed too, once the consumer is positioned at them: a
 * partition with a backlog and nothing decided yet then shows its whole lag, not "-".
 */
import type { SourceConsumer, State } from '../machines/ports.js';

export type FrontierCommitter = (partition: number, frontier: number) => void;

export function withGroupOffsetCommits(state: State, commit: FrontierCommitter): State {
  return {
    claim: (partition, signal) => state.claim(partition, signal),
    observe: (partition, signal) => state.observe(partition, signal),
    async process(request, signal) {
      const outcome = await state.process(request, signal);
      if (outcome.kind === 'acknowledged') commit(request.partition, outcome.frontier);
      return outcome;
    },
  };
}

export function withPositionCommits(consumer: SourceConsumer, commit: FrontierCommitter): SourceConsumer {
  return {
    connect: (signal) => consumer.connect(signal),
    poll: (maxRecords, signal) => consumer.poll(maxRecords, signal),
    async assign(positions, signal) {
      await consumer.assign(positions, signal);
      for (const { partition, offset } of positions) commit(partition, offset);
    },
    unassign: (signal) => consumer.unassign(signal),
    close: (signal) => consumer.close(signal),
  };
}
