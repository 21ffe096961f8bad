/**
 * Model-based test of the partition lifecycle (quality.md §1.2): xstate/graph walks the real
 * machine's definition (services and delays appear as their done/error/after events), a path
 * is generated to every edge, and each path runs against the real actor with controlled
 * services and a simulated clock. Coverage is measured on the real runs and must equal every
 * state and every transition of the definition.
 */

import { describe, expect, test } from 'vitest';
import { createActor } from 'xstate';
import { operationBudgetMs, retryWaitMs, storeAttemptsMax } from '../../src/machines/limits.js';
import { type PartitionReport, partitionMachine } from '../../src/machines/partition-machine.js';
import type { PartitionRow, ProcessOutcome, ProcessRequest, SourceObservation } from '../../src/machines/ports.js';
import { DeferredServices, settle } from './deferred-services.js';
import { type EdgePath, edgePaths } from './edge-paths.js';
import { allStates, allTransitions, CoverageRecorder } from './machine-coverage.js';
import {
  instantiate,
  leafPath,
  type ModelEvent,
  type PartitionSnapshot,
  partitionEvents,
  partitionInput,
  serializePartition,
} from './partition-model.js';
import { TestClock } from './test-clock.js';

/** The traversal runs actions: the parent notifications become no-ops there. */
const traversalMachine = partitionMachine.provide({
  actions: { reportPositioned: () => {}, reportSettled: () => {}, reportEnded: () => {} },
});

function realPartition(services: DeferredServices, reports: PartitionReport[]) {
  const owner = () => 'partition-0';
  return partitionMachine.provide({
    actors: {
      claim: services.actor<PartitionRow, { partition: number }>('claim', owner),
      observe: services.actor<PartitionRow, { partition: number }>('observe', owner),
      process: services.actor<ProcessOutcome, ProcessRequest>('process', owner),
      observeSource: services.actor<SourceObservation, { partitions: readonly number[] }>('observeSource', owner),
    },
    actions: {
      reportPositioned: ({ context }) =>
        reports.push({ type: 'PARTITION_POSITIONED', partition: context.partition, offset: context.frontier ?? -1 }),
      reportSettled: ({ context }) =>
        reports.push({ type: 'PARTITION_SETTLED', partition: context.partition, frontier: context.frontier ?? -1 }),
      reportEnded: ({ context }) => {
        if (context.end === null) throw new Error('ended without an end');
        reports.push({ type: 'PARTITION_ENDED', partition: context.partition, end: context.end });
      },
    },
  });
}

const serviceOfEvent = (type: string): string | undefined => /^xstate\.(?:done|error)\.actor\.(\w+)$/.exec(type)?.[1];

/** Applies one path step to the real actor: a send, a service completion, or simulated time. */
async function stimulate(
  event: ModelEvent,
  actor: ReturnType<typeof createActor<ReturnType<typeof realPartition>>>,
  services: DeferredServices,
  clock: TestClock,
): Promise<void> {
  const snapshot = actor.getSnapshot() as PartitionSnapshot;
  const concrete = instantiate(event.variant, snapshot);
  const service = serviceOfEvent(concrete.type);
  if (service !== undefined) {
    const call = services.open('partition-0', service);
    if (concrete.type.startsWith('xstate.done')) call.resolve((concrete as { output?: unknown }).output);
    else call.reject((concrete as { error?: unknown }).error);
  } else if (concrete.type.startsWith('xstate.after.operationBudget')) {
    clock.fire(operationBudgetMs);
  } else if (concrete.type.startsWith('xstate.after.retryWait')) {
    clock.fire(retryWaitMs(snapshot.context.attempts));
  } else {
    actor.send(concrete as Parameters<typeof actor.send>[0]);
  }
  await settle();
}

interface RunFacts {
  released: boolean;
  tokenAtRelease: unknown;
  openProcess: DeferredServices['calls'];
}

/** quality.md §1.2's invariants, checked after every step of every path. */
function checkStep(
  event: ModelEvent,
  before: PartitionSnapshot,
  after: PartitionSnapshot,
  newCalls: DeferredServices['calls'],
  facts: RunFacts,
): void {
  const where = `${leafPath(before.value)} —${event.variant}→ ${leafPath(after.value)}`;
  // A partition ends only after its decision resolved: an aborted process call may still
  // commit in PostgreSQL, so a revocation must never abandon one (the budget is the exception:
  // it fails the whole process, and the next owner's claim fences that transaction).
  if (after.status === 'done' && event.variant !== 'budget') {
    expect(
      newCalls.concat(facts.openProcess).filter((c) => c.service === 'process' && !c.settled),
      where,
    ).toEqual([]);
  }
  // No commit after retirement: a final partition makes no call at all.
  if (before.status === 'done') expect(newCalls, where).toEqual([]);
  // After invalidation no claim and no new decision starts, and the token never changes.
  if (facts.released) {
    expect(
      newCalls.filter((c) => c.service === 'claim' || c.service === 'process'),
      where,
    ).toEqual([]);
    expect(after.context.token, where).toEqual(facts.tokenAtRelease);
  }
  // The position moves only on a resolved commit, to last offset + 1.
  if (before.context.frontier !== null && after.context.frontier !== before.context.frontier) {
    expect(['process:ack', 'observe:committed'], where).toContain(event.variant);
    const last = before.context.batch[before.context.batch.length - 1]?.offset;
    expect(after.context.frontier, where).toBe((last ?? Number.NaN) + 1);
  }
  if (before.context.token === null && after.context.token !== null) {
    expect(event.variant, where).toBe('claim:compatible');
  }
  // Every decision is made with the saved epoch and the expected frontier.
  for (const call of newCalls.filter((c) => c.service === 'process')) {
    const request = call.input as ProcessRequest;
    expect(request.epoch, where).toBe(after.context.token?.epoch);
    expect(request.expectedFrontier, where).toBe(after.context.expectedFrontier);
  }
  // Exhaustion and unresolved outcomes reach `failed`; a fence retires.
  const lastAttempt = before.context.attempts >= storeAttemptsMax && before.context.release === null;
  if (event.variant === 'observe:error' && leafPath(before.value).endsWith('recovering')) {
    expect(after.value, where).toBe('failed');
    expect(after.context.end?.reason, where).toBe('outcome_unresolved');
  }
  if (lastAttempt && ['process:beforeCommit', 'claim:beforeCommit', 'observe:notCommitted'].includes(event.variant)) {
    expect(after.value, where).toBe('failed');
    expect(after.context.end?.reason, where).toBe('retries_exhausted');
  }
  // Its epoch under another claim is not the partition's own, even where the frontier fits:
  // it ends as another epoch would (fenced after an unknown commit, foreign when seeking).
  if (event.variant.endsWith('Elsewhere')) {
    expect(after.value, where).toBe('retired');
    const reason = leafPath(before.value).endsWith('recovering') ? 'fenced' : 'foreign_epoch';
    expect(after.context.end?.reason, where).toBe(reason);
  }
  // Less than this owner claimed or committed, or a fresh claim at or below an epoch read before
  // it: the database went back in time. Not another owner's doing, so no retirement: a
  // transient failure, and the group rides and claims afresh.
  if (event.variant.endsWith('Behind') || event.variant === 'claim:foreign') {
    expect(after.value, where).toBe('failed');
    expect(after.context.end?.reason, where).toBe('rolled_back');
  }
  // A lost configuration revision: the records cannot be decided again identically, exit 1.
  if (event.variant === 'process:revisionLost') {
    expect(after.value, where).toBe('failed');
    expect(after.context.end?.reason, where).toBe('revision_lost');
  }
  if (event.variant === 'process:fenced') {
    expect(after.value, where).toBe('retired');
    expect(after.context.end?.reason, where).toBe('fenced');
  }
  if (event.variant === 'budget') expect(after.context.end?.reason, where).toBe('budget_exhausted');
}

/**
 * Completes every call whose invoking state was left (its signal fired) as if the reply came
 * late: a claim that committed after all, a read, a commit. Nothing may change: no epoch is
 * installed after invalidation and a stale reply never moves the position.
 */
async function deliverLateResults(
  actor: ReturnType<typeof createActor<ReturnType<typeof realPartition>>>,
  services: DeferredServices,
): Promise<number> {
  const before = actor.getSnapshot() as PartitionSnapshot;
  const late = services.calls.filter((c) => !c.settled && c.signal.aborted);
  for (const call of late) {
    if (call.service === 'claim' || call.service === 'observe') call.resolve({ epoch: 99, frontier: 3 });
    else if (call.service === 'process') call.resolve({ kind: 'acknowledged', frontier: 99 });
    else call.resolve({ valid: true, bounds: [partitionInput.bounds] });
  }
  await settle();
  const after = actor.getSnapshot() as PartitionSnapshot;
  expect(after.value).toEqual(before.value);
  expect(after.context).toEqual(before.context);
  return late.length;
}

const lateReplies = { count: 0 };

async function runPath(path: EdgePath<PartitionSnapshot, ModelEvent>, recorder: CoverageRecorder): Promise<void> {
  const services = new DeferredServices();
  const clock = new TestClock();
  const reports: PartitionReport[] = [];
  const actor = createActor(realPartition(services, reports), {
    input: partitionInput,
    clock,
    inspect: recorder.inspect,
  });
  actor.start();
  await settle();
  const facts: RunFacts = { released: false, tokenAtRelease: null, openProcess: [] };
  for (const step of path.steps) {
    const before = actor.getSnapshot() as PartitionSnapshot;
    if (step.event.type === 'RELEASE' && !facts.released) {
      facts.released = true;
      facts.tokenAtRelease = before.context.token;
    }
    const seq = services.nextSeq;
    await stimulate(step.event, actor, services, clock);
    const after = actor.getSnapshot() as PartitionSnapshot;
    expect(after.value, `after ${step.event.variant}`).toEqual(step.state.value);
    expect(after.status).not.toBe('error');
    facts.openProcess = services.calls.filter((c) => c.service === 'process' && !c.settled);
    checkStep(step.event, before, after, services.callsSince(seq), facts);
  }
  lateReplies.count += await deliverLateResults(actor, services);
  const final = actor.getSnapshot() as PartitionSnapshot;
  // A final partition reported its end exactly once; a live one never did.
  const ended = reports.filter((r) => r.type === 'PARTITION_ENDED');
  expect(ended).toEqual(
    final.status === 'done' ? [{ type: 'PARTITION_ENDED', partition: 0, end: final.context.end }] : [],
  );
  // Leaving a state aborted its service: nothing of a final partition is still open.
  if (final.status === 'done') expect(services.calls.filter((c) => !c.settled && !c.signal.aborted)).toEqual([]);
  actor.stop();
}

describe('partition machine, model-based', () => {
  test('paths to every edge reach every state and transition of the real machine', async () => {
    const { vertices, paths } = edgePaths(traversalMachine, {
      serializeState: serializePartition,
      events: partitionEvents,
      input: partitionInput,
    });
    const recorder = new CoverageRecorder();
    for (const path of paths) await runPath(path, recorder);

    const transitions = allTransitions(partitionMachine);
    const states = allStates(partitionMachine);
    console.log(
      `partition machine: ${states.length} states, ${transitions.length} transitions; ` +
        `${vertices} model vertices, ${paths.length} paths (${paths.reduce((n, p) => n + p.steps.length, 0)} steps); ` +
        `late replies ignored: ${lateReplies.count}; covered ${recorder.statesOf('partition').length} states, ${recorder.transitionsOf('partition').length} transitions`,
    );
    expect(recorder.statesOf('partition')).toEqual(states);
    expect(recorder.transitionsOf('partition')).toEqual(transitions);
  });
});
