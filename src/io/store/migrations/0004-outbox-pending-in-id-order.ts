import type { Migration } from './migration.js';

/**
 * The relay reads a namespace's unpublished envelopes in outbox order (`pendingOutboxRowsSql`
 * in outbox-relay.ts). The pending index of migration 0002 had the partition between namespace
 * and id, so it could not give that order, and the planner walked the primary key instead,
 * filtering out every published row and every other namespace's rows: 425 ms per batch with
 * 800,000 envelopes in the table (measured in the benchmark, whose throughput namespaces leave
 * theirs unpublished), which capped the relay near 1,000 rows/s.
 *
 * An index on (namespace, id) alone is not enough: the planner takes a namespace's share of
 * pending rows to be the table's and the primary key walk to find them early, and still
 * prefers it (seen with 150,000 envelopes of another namespace ahead). The read therefore
 * orders by `id + 0`, an order only this index gives: its range scan stops at the batch limit
 * whatever the rest of the table holds.
 */
export const outboxPendingInIdOrderMigration: Migration = {
  version: 4,
  name: 'outbox_pending_in_id_order',
  sql: `
    DROP INDEX outbox_pending;
    CREATE INDEX outbox_pending ON outbox (namespace, (id + 0)) WHERE published_at IS NULL;
  `,
};
