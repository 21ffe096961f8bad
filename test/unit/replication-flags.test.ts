/**
 * The replication flags of source-create and output-create (src/cli/replication-flags.ts):
 * the in-sync floor's default, when the topic sets it, and the usage errors.
 */
import { describe, expect, it } from 'vitest';
import { defaultMinInsyncReplicas, topicReplicationFrom } from '../../src/cli/replication-flags.js';

/** A usage error (exit 2) whose message matches. */
function usageError(message: RegExp | string) {
  return expect.objectContaining({
    code: 'usage',
    message: typeof message === 'string' ? message : expect.stringMatching(message),
  });
}

describe('--min-insync-replicas', () => {
  it('defaults to min(2, RF - 1), at least 1', () => {
    expect([1, 2, 3, 4, 5, 32].map(defaultMinInsyncReplicas)).toEqual([1, 1, 2, 2, 2, 2]);
  });

  it('leaves a single-replica topic created without the flag at the broker default', () => {
    expect(topicReplicationFrom({ replicationFactor: 1 })).toEqual({
      replicationFactor: 1,
      minInsyncReplicas: undefined,
    });
  });

  it('sets the default floor from replication factor 2 on, and any given floor', () => {
    expect(topicReplicationFrom({ replicationFactor: 3 })).toEqual({
      replicationFactor: 3,
      minInsyncReplicas: 2,
    });
    expect(topicReplicationFrom({ replicationFactor: 2 }).minInsyncReplicas).toBe(1);
    expect(topicReplicationFrom({ replicationFactor: 1, minInsyncReplicas: 1 }).minInsyncReplicas).toBe(1);
    expect(topicReplicationFrom({ replicationFactor: 3, minInsyncReplicas: 3 }).minInsyncReplicas).toBe(3);
  });

  it('refuses a floor outside [1, RF] and a replication factor outside [1, 32]', () => {
    expect(() => topicReplicationFrom({ replicationFactor: 3, minInsyncReplicas: 4 })).toThrow(
      usageError(/^--min-insync-replicas must be an integer in \[1, 3\]/),
    );
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => topicReplicationFrom({ replicationFactor: 3, minInsyncReplicas: bad })).toThrow(
        usageError(/^--min-insync-replicas must be an integer/),
      );
    }
    for (const bad of [0, 33, 2.5]) {
      expect(() => topicReplicationFrom({ replicationFactor: bad })).toThrow(
        usageError('--replication-factor must be an integer in [1, 32]'),
      );
    }
  });
});
