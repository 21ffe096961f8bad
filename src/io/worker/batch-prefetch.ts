/**
 * The source consumer, handing each polled batch to the store at once (postgres-state.ts
 * `prefetch`), so the store screens it and, after a claim, reads its windows while the group
 * observes the source before deciding. The machines see the same consumer: nothing of their
 * order changes, only the store's reads start earlier.
 */
import type { SourceConsumer, SourceRecord } from '../../machines/ports.js';

export interface BatchPrefetcher {
  prefetch(records: readonly SourceRecord[]): void;
}

export function withBatchPrefetch(consumer: SourceConsumer, store: BatchPrefetcher): SourceConsumer {
  return {
    connect: (signal) => consumer.connect(signal),
    async poll(maxRecords, signal) {
      const records = await consumer.poll(maxRecords, signal);
      store.prefetch(records);
      return records;
    },
    assign: (positions, signal) => consumer.assign(positions, signal),
    unassign: (signal) => consumer.unassign(signal),
    close: (signal) => consumer.close(signal),
  };
}
