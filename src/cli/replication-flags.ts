/**
 * `--replication-factor N` and `--min-insync-replicas N` of the commands that create a topic
 * amends relies on (source-create, output-create), validated the same way for both before
 * the broker is touched.
 *
 * `min.insync.replicas` is what makes replication count: amends' producers (source-load and
 * the relay) write with acks=all, and the broker acknowledges such a write once every
 * in-sync replica has it, however few are left in sync, unless the topic sets a floor.
 * The default floor is min(2, RF - 1), at least 1: with RF 3 a write is on two brokers
 * before it is acknowledged and one broker may be down without stopping writes; with RF 1
 * or 2 the floor is 1, so one broker down does not stop a topic that has no replica to
 * spare. A floor above the replication factor would refuse every write, so it is refused.
 */
import { usageError } from '../kernel/amends-error.js';

export const replicationFactorMax = 32;

/** The floor a topic gets when --min-insync-replicas is not given. */
const defaultInsyncFloorMax = 2;

export const replicationFlags = {
  replicationFactor: { type: 'number', default: 1 },
  minInsyncReplicas: { type: 'number' },
} as const;

export interface TopicReplication {
  replicationFactor: number;
  /**
   * The topic's own `min.insync.replicas`: the flag's value, or the default floor from a
   * replication factor of 2 on. Undefined for a single-replica topic created without the
   * flag: it keeps the broker's default, as before this flag existed (the single-broker
   * stack's topics are unchanged).
   */
  minInsyncReplicas: number | undefined;
}

export function defaultMinInsyncReplicas(replicationFactor: number): number {
  return Math.max(1, Math.min(defaultInsyncFloorMax, replicationFactor - 1));
}

export function topicReplicationFrom(flags: {
  replicationFactor: number;
  minInsyncReplicas?: number | undefined;
}): TopicReplication {
  const { replicationFactor, minInsyncReplicas } = flags;
  if (!Number.isSafeInteger(replicationFactor) || replicationFactor < 1 || replicationFactor > replicationFactorMax) {
    throw usageError(`--replication-factor must be an integer in [1, ${replicationFactorMax}]`);
  }
  if (minInsyncReplicas === undefined) {
    return {
      replicationFactor,
      minInsyncReplicas: replicationFactor >= 2 ? defaultMinInsyncReplicas(replicationFactor) : undefined,
    };
  }
  if (!Number.isSafeInteger(minInsyncReplicas) || minInsyncReplicas < 1 || minInsyncReplicas > replicationFactor) {
    throw usageError(
      `--min-insync-replicas must be an integer in [1, ${replicationFactor}] (at most the replication factor, or no write is ever acknowledged)`,
    );
  }
  return { replicationFactor, minInsyncReplicas };
}
