import type { Migration } from './migration.js';

/**
 * Ownership that cannot repeat across a database that went back in time (issue 33). An epoch is
 * a counter: after an asynchronous failover or a restored backup the next claim hands out an
 * epoch number that a worker of the lost timeline still holds, so the number alone no longer
 * proves who owns a partition. Every claim now also draws a random `claim` (a UUID), and every
 * batch commit checks it with the epoch: a worker whose claim the database no longer holds is
 * fenced whatever its epoch says.
 *
 * Existing rows are converted in place: `claim` is NULL until the partition's next claim, which
 * every worker makes before it commits (a worker of the previous build, which does not send a
 * claim, keeps working: its statement does not check the column).
 */
export const partitionClaimsMigration: Migration = {
  version: 9,
  name: 'partition_claims',
  sql: `
    ALTER TABLE partitions ADD COLUMN claim uuid;
  `,
};
