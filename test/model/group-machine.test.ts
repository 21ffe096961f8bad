/**
 * Model-based test of the group machine (quality.md §1.2): xstate/graph walks the real group
 * machine for two partitions, a path is generated to every edge, and each path runs against
 * the real group with REAL partition actors, controlled services and a simulated clock.
 * A child report in a path (PARTITION_POSITIONED, _SETTLED, _ENDED) is produced by completing
 * that child's own service calls, so the children's behaviour is part of what is checked.
 */

import { describe, expect, test } from 'vitest';
import { type AnyActorRef, createActor } from 'xstate';
import { groupMachine, partitionActorId } from '../../src/machines/group-machine.js';
import { partitionMachine } from '../../src/machines/partition-machine.js';
import {
  type PartitionPosition,
  type PartitionRow,
  type ProcessOutcome,
  type ProcessRequest,
  type SourceObservation,
  type SourceRecord,
  StoreFailure,
} from '../../src/machines/ports.js';
import { DeferredServices, settle } from './deferred-services.js';
import { type EdgePath, edgePaths } from './edge-paths.js';
import {
  type GroupSnapshot,
  groupClaimedFrontier,
  groupEvents,
  groupInput,
  instantiateGroup,
  serializeGroup,
} from './group-model.js';
import { allStates, allTransitions, CoverageRecorder } from './machine-coverage.js';
import { leafPath, type ModelEvent, type PartitionSnapshot } from './partition-model.js';
import { TestClock } from './test-clock.js';

function realGroup(services: DeferredServices) {
  const child = (input: { partition?: number; partitions?: readonly number[] }) =>
    partitionActorId(input.partition ?? input.partitions?.[0] ?? -1);
  const group = () => 'group';
  return groupMachine.provide({
    actors: {
      partition: partitionMachine.provide({
        actors: {
          claim: services.actor<PartitionRow, { partition: number }>('claim', child),
          observe: services.actor<PartitionRow, { partition: number }>('observe', child),
          process: services.actor<ProcessOutcome, ProcessRequest>('process', child),
          observeSource: services.actor<SourceObservation, { partitions: readonly number[] }>('observeSource', child),
        },
      }),
      connect: services.actor<void, void>('connect', group),
      poll: services.actor<readonly SourceRecord[], { maxRecords: number }>('poll', group),
      observeSource: services.actor<SourceObservation, { partitions: readonly number[] }>('observeSource', group),
      probe: services.actor<SourceObservation, { partitions: readonly number[] }>('probe', group),
      assign: services.actor<void, { positions: readonly PartitionPosition[] }>('assign', group),
      unassign: services.actor<void, void>('unassign', group),
      close: services.actor<void, void>('close', group),
    },
  });
}

type GroupActor = ReturnType<typeof createActor<ReturnType<typeof realGroup>>>;

function childSnapshot(actor: GroupActor, partition: number): PartitionSnapshot | undefined {
  const ref = (actor.getSnapshot().children as Record<string, AnyActorRef | undefined>)[partitionActorId(partition)];
  return ref?.getSnapshot() as PartitionSnapshot | undefined;
}

/** Completes one of a child's calls and lets the system react. */
async function complete(
  services: DeferredServices,
  partition: number,
  service: string,
  outcome: { output: unknown } | { error: unknown },
) {
  const call = services.open(partitionActorId(partition), service);
  if ('output' in outcome) call.resolve(outcome.output);
  else call.reject(outcome.error);
  await settle();
}

const groupService = (type: string): string | undefined => /^xstate\.(?:done|error)\.actor\.(\w+)$/.exec(type)?.[1];

async function stimulate(event: ModelEvent, actor: GroupActor, services: DeferredServices): Promise<void> {
  const snapshot = actor.getSnapshot() as GroupSnapshot;
  const concrete = instantiateGroup(event.variant, snapshot);
  const [name = '', arg] = event.variant.split(':');
  const p = Number(arg);
  const lastOffset = () => {
    const batch = childSnapshot(actor, p)?.context.batch ?? [];
    return batch[batch.length - 1]?.offset ?? -1;
  };
  const unknown = new StoreFailure('unknown_outcome', 'connection lost during COMMIT');
  switch (name) {
    case 'auto':
      return; // the partition ended by itself when it was released
    case 'positioned':
      await complete(services, p, 'claim', { output: { epoch: 1, frontier: groupClaimedFrontier } });
      await complete(services, p, 'observe', { output: { epoch: 1, frontier: groupClaimedFrontier } });
      await complete(services, p, 'observeSource', {
        output: { valid: true, bounds: [{ partition: p, retainedStart: 0, readCommittedEnd: 100 }] },
      });
      return;
    // Another owner claimed between this claim and its seek.
    case 'foreign':
      await complete(services, p, 'claim', { output: { epoch: 1, frontier: groupClaimedFrontier } });
      await complete(services, p, 'observe', { output: { epoch: 2, frontier: groupClaimedFrontier } });
      return;
    // A claim at or below an epoch read before it: the database went back in time.
    case 'back':
      await complete(services, p, 'claim', { output: { epoch: 0, frontier: groupClaimedFrontier } });
      return;
    case 'invalid':
      await complete(services, p, 'claim', { output: { epoch: 1, frontier: 101 } });
      return;
    case 'failed':
      await complete(services, p, 'process', { error: unknown });
      await complete(services, p, 'observe', { error: new Error('connection refused') });
      return;
    case 'settled':
    case 'finish':
      await complete(services, p, 'process', { output: { kind: 'acknowledged', frontier: lastOffset() + 1 } });
      return;
    case 'fenced':
      await complete(services, p, 'process', { output: { kind: 'fenced', epoch: 2 } });
      return;
    case 'budget':
    case 'wait':
    case 'expired':
    case 'quiet':
      // The group's own timers are delivered directly: the partition actors' budgets are due
      // at the same simulated instant, and these steps are about the group's.
      actor.send(concrete as unknown as Parameters<GroupActor['send']>[0]);
      await settle();
      return;
  }
  const service = groupService(concrete.type);
  if (service !== undefined) {
    const call = services.open('group', service);
    if (concrete.type.startsWith('xstate.done')) call.resolve((concrete as { output?: unknown }).output);
    else call.reject((concrete as { error?: unknown }).error);
  } else {
    actor.send(concrete as unknown as Parameters<GroupActor['send']>[0]);
  }
  await settle();
}

function liveChildren(actor: GroupActor): PartitionSnapshot[] {
  return [0, 1].flatMap((p) => {
    const s = childSnapshot(actor, p);
    return s !== undefined && s.status === 'active' ? [s] : [];
  });
}

/** quality.md §1.2's invariants at the group level, after every step. */
function checkStep(
  event: ModelEvent,
  before: GroupSnapshot,
  actor: GroupActor,
  newCalls: DeferredServices['calls'],
  allCalls: DeferredServices['calls'],
  revoked: boolean,
) {
  const after = actor.getSnapshot() as GroupSnapshot;
  const where = `${leafPath(before.value)} —${event.variant}→ ${leafPath(after.value)}`;
  const children = liveChildren(actor);
  // Serial processing: at most one decision in flight in the whole process.
  expect(children.filter((c) => leafPath(c.value).startsWith('processing.deciding')).length, where).toBeLessThanOrEqual(
    1,
  );
  // The group's view of its partitions matches its children.
  const live = after.context.partitions.filter((e) => e.phase !== 'retired' && e.phase !== 'failed');
  expect(children.map((c) => c.context.partition).sort(), where).toEqual(live.map((e) => e.partition).sort());
  // After a revocation nothing is claimed before the next assignment: the revoked partitions
  // may be another member's now.
  if (revoked)
    expect(
      newCalls.filter((c) => c.service === 'claim'),
      where,
    ).toEqual([]);
  for (const call of newCalls) {
    // Unassign and close only after every partition actor ended (revocation waits for the decision).
    if (call.owner === 'group' && (call.service === 'unassign' || call.service === 'close')) {
      expect(children, `${where}: ${call.service} with live partitions`).toEqual([]);
      const unresolved = allCalls.filter((c) => c.service === 'process' && !c.settled && c.seq < call.seq);
      expect(unresolved, `${where}: ${call.service} before a decision resolved`).toEqual([]);
    }
    // No new decision once the group revokes or drains (a dispatch of a poll's last batch goes
    // on to the next poll at once).
    if (call.service === 'process') expect(leafPath(after.value), where).toMatch(/^running\.(deciding|polling)$/);
    // A riding group probes only once every partition has left processing.
    if (call.service === 'probe') expect(children, `${where}: probe with live partitions`).toEqual([]);
    // The consumer is assigned at the frontiers PostgreSQL returned.
    if (call.service === 'assign') {
      for (const position of (call.input as { positions: PartitionPosition[] }).positions) {
        expect(position.offset, where).toBe(groupClaimedFrontier);
      }
    }
  }
  const [name = '', arg] = event.variant.split(':');
  // A fence retires only its partition.
  if (name === 'fenced') {
    expect(leafPath(after.value), where).not.toMatch(/^draining/);
    expect(after.context.partitions.find((e) => e.partition === Number(arg))?.phase, where).toBe('retired');
  }
  // After a ride the group claims its assignment again, but never a partition another owner took.
  if (event.variant === 'probe:done') {
    const taken = before.context.partitions.filter(
      (e) => e.end?.reason === 'fenced' || e.end?.reason === 'foreign_epoch',
    );
    for (const e of taken) expect(after.context.assignment, where).not.toContain(e.partition);
    expect(after.context.generation, where).toBe(before.context.generation + 1);
  }
  // Assigned again, the group's claims committed and its source answered: the outage is over,
  // so a later one has a budget of its own (a chain of short outages is not one long one).
  if (event.variant === 'assign:done') expect(after.context.outage, where).toBeNull();
  // A committed decision ends the count of rides without one.
  if (name === 'settled') expect(after.context.rides, where).toBe(0);
  // An invalid source fails the whole process.
  if (name === 'invalid') {
    expect(after.context.failure, where).not.toBeNull();
    expect(leafPath(after.value), where).toMatch(/^draining/);
  }
  // A transient failure suspends processing (worker.md §6); only a spent outage budget, a stop
  // already under way or a revocation (the partitions go anyway) decide otherwise.
  if (name === 'failed' || name === 'back') {
    const from = leafPath(before.value);
    if (from.startsWith('draining')) expect(after.context.failure, where).not.toBeNull();
    else if (from.startsWith('running.revoking')) expect(after.context.failure, where).toBeNull();
    else {
      expect(after.context.outage, where).not.toBeNull();
      const spent = after.context.outage?.overdue === true || after.context.rides >= after.context.ridesMax;
      expect(leafPath(after.value), where).toMatch(spent ? /^draining/ : /^running\.riding/);
    }
  }
  // Another database server: claim afresh (a ride), unless riding or revoking already does, or
  // nothing is claimed (the next assignment claims afresh; a ride would claim revoked partitions).
  if (name === 'CHANGED') {
    const from = leafPath(before.value);
    const claimed = before.context.partitions.some((e) => e.phase !== 'retired' && e.phase !== 'failed');
    if (from.startsWith('running.riding') || from.startsWith('running.revoking') || !claimed)
      expect(after.value, where).toEqual(before.value);
    else {
      expect(after.context.outage?.failure.reason, where).toBe('database_changed');
      expect(leafPath(after.value), where).toMatch(/^(running\.riding|draining)/);
    }
  }
  if (after.status === 'done') {
    expect(after.output, where).toEqual({
      exitCode: after.context.failure === null ? 0 : 1,
      failure: after.context.failure,
    });
    expect(after.value === 'failed', where).toBe(after.context.failure !== null);
  }
}

const lateReplies = { count: 0 };

async function runPath(path: EdgePath<GroupSnapshot, ModelEvent>, recorder: CoverageRecorder): Promise<void> {
  const services = new DeferredServices();
  const clock = new TestClock();
  const actor = createActor(realGroup(services), { input: groupInput, clock, inspect: recorder.inspect });
  actor.start();
  await settle();
  const steps = path.steps;
  let revoked = false;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i];
    if (step === undefined) continue;
    if (step.event.variant === 'REVOKED' || step.event.variant === 'LOST') revoked = true;
    if (step.event.variant.startsWith('ASSIGNED')) revoked = false;
    const before = actor.getSnapshot() as GroupSnapshot;
    const seq = services.nextSeq;
    await stimulate(step.event, actor, services);
    expect(actor.getSnapshot().status, `after ${step.event.variant}`).not.toBe('error');
    // Released partitions end by themselves: compare once the run of such steps is over.
    if (steps[i + 1]?.event.variant.startsWith('auto:')) continue;
    expect(actor.getSnapshot().value, `after ${step.event.variant}`).toEqual(step.state.value);
    checkStep(step.event, before, actor, services.callsSince(seq), services.calls, revoked);
  }
  lateReplies.count += await deliverLateResults(actor, services);
  actor.stop();
}

/** Late replies to calls whose state was left change nothing (no install after invalidation). */
async function deliverLateResults(actor: GroupActor, services: DeferredServices): Promise<number> {
  const tokens = () => [0, 1].map((p) => childSnapshot(actor, p)?.context.token ?? null);
  const [value, context, before] = [actor.getSnapshot().value, actor.getSnapshot().context, tokens()];
  const late = services.calls.filter((c) => !c.settled && c.signal.aborted);
  for (const call of late) {
    if (call.service === 'claim' || call.service === 'observe')
      call.resolve({ epoch: 99, frontier: groupClaimedFrontier });
    else if (call.service === 'process') call.resolve({ kind: 'acknowledged', frontier: 99 });
    else if (call.service === 'observeSource') call.resolve({ valid: true, bounds: [] });
    else if (call.service === 'poll') call.resolve([{ partition: 0, offset: 50, key: null, value: null }]);
    else call.resolve(undefined);
  }
  await settle();
  expect(actor.getSnapshot().value).toEqual(value);
  expect(actor.getSnapshot().context).toEqual(context);
  expect(tokens()).toEqual(before);
  return late.length;
}

describe('group machine, model-based', () => {
  test('paths to every edge reach every state and transition of the real machine', async () => {
    const traversalMachine = groupMachine;
    const { vertices, paths } = edgePaths(traversalMachine, {
      serializeState: serializeGroup,
      events: groupEvents,
      input: groupInput,
      forced: (event) => event.variant.startsWith('auto:'),
    });
    const recorder = new CoverageRecorder();
    for (const path of paths) await runPath(path, recorder);

    const transitions = allTransitions(groupMachine);
    const states = allStates(groupMachine);
    console.log(
      `group machine: ${states.length} states, ${transitions.length} transitions; ` +
        `${vertices} model vertices, ${paths.length} paths (${paths.reduce((n, p) => n + p.steps.length, 0)} steps); ` +
        `late replies ignored: ${lateReplies.count}; covered ${recorder.statesOf('group').length} states, ${recorder.transitionsOf('group').length} transitions ` +
        `(and ${recorder.transitionsOf('partition').length} partition transitions along the way)`,
    );
    expect(recorder.statesOf('group')).toEqual(states);
    expect(recorder.transitionsOf('group')).toEqual(transitions);
  });
});
