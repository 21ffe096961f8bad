/**
 * What the batch commit's answer means for the machines (docs/design.md#unknown-outcomes): acknowledged,
 * fenced, or an unexpected frontier; or 'stale' or 'revised', for the store to read and decide again.
 */

import { assertInvariant } from '../../kernel/invariant.js';
import type { ProcessOutcome, ProcessRequest } from '../../machines/ports.js';
import type { CommitRow } from './sql/commit-batch.js';
import { partitionRowOf } from './sql/partition-row.js';

/**
 * What the batch statement's answer means: committed only when the locked partition row had
 * the request's epoch and the store's claim (migration 0009), frontier and the configuration revision the batch was decided under
 * ('revised' otherwise: the store reads the chain and decides again) and no transaction taken
 * as new was stored ('stale').
 */
export function commitVerdict(
  request: ProcessRequest,
  row: CommitRow | undefined,
  batch: { assumedNew: number; frontier: number; revision: number },
): ProcessOutcome | 'stale' | 'revised' {
  const { assumedNew, frontier, revision } = batch;
  const { epoch, expectedFrontier } = request;
  assertInvariant(row !== undefined, 'the batch commit returned no row');
  if (row.epoch === null) {
    assertInvariant(row.committed === 0, 'a batch committed without a partition row');
    return { kind: 'fenced', epoch: 0 };
  }
  const durable = partitionRowOf(row, 'process');
  const owned = durable.epoch === epoch && row.own_claim;
  const matched = owned && durable.frontier === expectedFrontier && row.config_revision === revision;
  assertInvariant(row.stale === 0 || assumedNew > 0, `${row.stale} stale transactions, none assumed new`);
  assertInvariant(
    (matched && row.stale === 0) === (row.committed === 1),
    `commit ${row.committed} disagrees with the partition row`,
  );
  // The same epoch under another claim: the database went back in time and handed it out again.
  if (!owned) return { kind: 'fenced', epoch: durable.epoch };
  if (durable.frontier !== expectedFrontier) return { kind: 'unexpected_frontier', frontier: durable.frontier };
  if (row.config_revision !== revision) return 'revised';
  if (row.stale > 0) return 'stale';
  return { kind: 'acknowledged', frontier };
}
