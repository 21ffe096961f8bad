/**
 * What the worker runtime (src/io/worker/worker-runtime.ts) reports of its actors: the shape
 * its heartbeat, metrics and dashboard read. It lives with the machines because it is made of
 * their state values and contexts, and the heartbeat codec below the worker room reads it.
 */
import type { StateValue } from 'xstate';
import type { GroupContext } from './group-machine.js';
import type { PartitionContext } from './partition-machine.js';

export interface WorkerSummary {
  /** The group's state value, e.g. {"running":"polling"}. */
  state: StateValue;
  context: GroupContext;
  /** Each live partition actor's state value and dashboard context (token, frontier, operation, attempts). */
  partitions: { id: string; state: StateValue; context: PartitionContext; deadlineAtMs: number | null }[];
}
