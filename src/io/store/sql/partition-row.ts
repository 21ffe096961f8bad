/**
 * The partition row's own statements (docs/design.md#store): `claim`, an upsert that increments the
 * epoch under the partition row lock, and `observe`, a plain read; and the row as the
 * machines see it.
 */

import { assertInvariant } from '../../../kernel/invariant.js';
import { int8ToSafeInteger } from '../../../kernel/safe-integer.js';
import type { PartitionRow } from '../../../machines/ports.js';

/**
 * $1 namespace, $2 partition, $3 the owner recorded for inspection. Each claim draws a random
 * `claim` the commits check with the epoch (migration 0009: an epoch may repeat after the
 * database went back in time; a claim does not).
 */
export const claimSql = `
  INSERT INTO partitions AS p (namespace, partition, epoch, owner, claim) VALUES ($1, $2, 1, $3, gen_random_uuid())
  ON CONFLICT (namespace, partition)
  DO UPDATE SET epoch = p.epoch + 1, owner = EXCLUDED.owner, claimed_at = now(), claim = EXCLUDED.claim
  RETURNING epoch, frontier, config_revision, claim`;

/** $1 namespace, $2 partition. */
export const observeSql = 'SELECT epoch, frontier, claim FROM partitions WHERE namespace = $1 AND partition = $2';

/** The partition row's epoch and frontier as a statement returns them (int8: strings). */
export interface EpochFrontierRow {
  epoch: unknown;
  frontier: unknown;
}

/** The claim's row: also the namespace's newest configuration revision (migration 0008) and its claim (0009). */
export interface ClaimRow extends EpochFrontierRow {
  config_revision: number;
  claim: string;
}

/** The observed row with its claim (null before the partition's first claim by this build). */
export interface ObservedRow extends EpochFrontierRow {
  claim: string | null;
}

/** The row as the machines see it (safe integers); `what` names the statement in a failed check. */
export function partitionRowOf(row: EpochFrontierRow | undefined, what: string): PartitionRow {
  assertInvariant(row !== undefined, `${what} returned no partition row`);
  return {
    epoch: int8ToSafeInteger(row.epoch, `${what}: epoch`),
    frontier: int8ToSafeInteger(row.frontier, `${what}: frontier`),
  };
}
