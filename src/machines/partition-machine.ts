/**
 * The lifecycle of one assigned partition (docs/design.md#partition-lifecycle, #unknown-outcomes):
 * one actor per unit of ownership, spawned by the group actor. This file is the chart; what its
 * names mean (services, delays, guards, actions) is in partition-setup.ts, the ends it gives in
 * partition-ends.ts, and how it hands a service's answer to a guard or an action in
 * service-params.ts.
 *
 *   unassigned ─ASSIGNED→ claiming ─compatible→ seeking ─POSITIONED→ processing.idle
 *   processing.idle ─BATCH→ processing.deciding.committing ─acknowledged→ processing.idle
 *   committing ─unknown→ recovering ─committed→ idle | ─not committed→ waiting → committing
 *   fenced, foreign epoch, unexpected frontier, RELEASE (revoked, lost, stopped) → retired
 *   attempts or budget exhausted, outcome unresolved, source invalid → failed
 *   a row or answer below this owner's own (the database went back in time) → failed
 *     (rolled_back: transient, the group rides and claims afresh); a lost configuration
 *     revision → failed (revision_lost: the process exits 1)
 *
 * `claiming`, `seeking` and `deciding` each run under one shared `operationBudget` (an xstate
 * delay, so tests run it on a simulated clock); store calls get `storeAttemptsMax` attempts.
 */

import { recoveringState } from './partition-recovery.js';
import { type BatchParams, partitionSetup, type ReleaseParams } from './partition-setup.js';
import type { BatchEvent, ReleaseEvent } from './partition-types.js';
import type { ProcessRequest } from './ports.js';
import { answer, failure, observation, row, rowSeenBy } from './service-params.js';

export type { FailReason, PartitionEnd, ReleaseReason, RetireReason, StoreOperation } from './partition-ends.js';
export type {
  LastOutcome,
  OwnershipToken,
  PartitionContext,
  PartitionEvent,
  PartitionInput,
  PartitionReport,
} from './partition-types.js';

export const partitionMachine = partitionSetup.createMachine({
  id: 'partition',
  context: ({ input }) => ({
    namespace: input.namespace,
    partition: input.partition,
    generation: input.generation,
    bounds: input.bounds,
    token: null,
    frontier: null,
    epochFloor: 0,
    batch: [],
    expectedFrontier: null,
    operation: null,
    attempts: 0,
    release: null,
    lastOutcome: null,
    end: null,
  }),
  initial: 'unassigned',
  output: ({ context }) => context.end,
  states: {
    unassigned: {
      description: 'Spawned for an assignment; nothing is claimed yet.',
      on: {
        ASSIGNED: { target: 'claiming', actions: { type: 'beginOperation', params: { operation: 'claim' } } },
        RELEASE: { target: 'retired', actions: 'retireOnRelease' },
      },
    },
    claiming: {
      description:
        'PostgreSQL increments the epoch under the row lock and returns (epoch, frontier); a compatible answer saves the ownership token.',
      // Leaving `claiming` stops the claim service: a late claim result after a revocation is
      // dropped by xstate and never installs an epoch (docs/design.md#partition-lifecycle: no
      // install after invalidation).
      on: { RELEASE: { target: 'retired', actions: 'retireOnRelease' } },
      after: { operationBudget: { target: 'failed', actions: 'failBudgetExhausted' } },
      initial: 'claim',
      states: {
        claim: {
          description: 'One claim attempt.',
          entry: 'countAttempt',
          invoke: {
            id: 'claim',
            src: 'claim',
            input: ({ context }) => ({ partition: context.partition }),
            onDone: [
              // A fresh claim returns more than any epoch read before it, unless the database
              // went back in time between the two: never adopted, the group claims afresh.
              {
                guard: { type: 'claimedForeignEpoch', params: row },
                target: '#partition.failed',
                actions: { type: 'failRowWentBack', params: rowSeenBy('claim') },
              },
              {
                guard: { type: 'claimedFrontierOutOfBounds', params: row },
                target: '#partition.failed',
                actions: { type: 'failFrontierBeyondEnd', params: { frontier: 'claimed' } },
              },
              {
                target: '#partition.seeking',
                actions: [
                  { type: 'installToken', params: row },
                  { type: 'beginOperation', params: { operation: 'seek' } },
                ],
              },
            ],
            onError: [
              // An unknown claim may have installed an epoch: observe it, never adopt it.
              { guard: { type: 'mayHaveCommitted', params: failure }, target: 'observeAfterUnknown' },
              { guard: 'attemptsRemain', target: 'wait' },
              {
                target: '#partition.failed',
                actions: { type: 'failRetriesExhausted', params: { after: 'claimFailed' } },
              },
            ],
          },
        },
        observeAfterUnknown: {
          description:
            'After an unknown claim: observe the epoch it may have installed, to be exceeded, never adopted.',
          invoke: {
            id: 'observe',
            src: 'observe',
            input: ({ context }) => ({ partition: context.partition }),
            onDone: [
              { guard: 'attemptsRemain', target: 'wait', actions: { type: 'raiseEpochFloor', params: row } },
              {
                target: '#partition.failed',
                actions: [
                  { type: 'raiseEpochFloor', params: row },
                  { type: 'failRetriesExhausted', params: { after: 'claimOutcomeUnknown' } },
                ],
              },
            ],
            onError: [
              { guard: 'attemptsRemain', target: 'wait' },
              {
                target: '#partition.failed',
                actions: { type: 'failRetriesExhausted', params: { after: 'claimUnresolved' } },
              },
            ],
          },
        },
        wait: {
          description:
            'A cancellable wait; a still-valid assignment then claims afresh (it may consume another epoch).',
          after: { retryWait: 'claim' },
        },
      },
    },
    seeking: {
      description:
        "Re-observe PostgreSQL, check the token's epoch, validate the retained boundary, then let the group assign at the frontier. Never installs an epoch.",
      on: { RELEASE: { target: 'retired', actions: 'retireOnRelease' } },
      after: { operationBudget: { target: 'failed', actions: 'failBudgetExhausted' } },
      initial: 'observeStore',
      states: {
        observeStore: {
          description: 'Re-read epoch and frontier: a foreign epoch or a moved frontier retires.',
          entry: 'countAttempt',
          invoke: {
            id: 'observe',
            src: 'observe',
            input: ({ context }) => ({ partition: context.partition }),
            onDone: [
              {
                guard: { type: 'rowWentBack', params: row },
                target: '#partition.failed',
                actions: { type: 'failRowWentBack', params: rowSeenBy('observe') },
              },
              {
                guard: { type: 'observedForeignEpoch', params: row },
                target: '#partition.retired',
                actions: { type: 'retireForeignEpoch', params: { seen: 'observe' } },
              },
              {
                guard: { type: 'observedFrontierMoved', params: row },
                target: '#partition.retired',
                actions: { type: 'retireUnexpectedFrontier', params: { seen: 'observe' } },
              },
              { target: 'observeSource' },
            ],
            onError: [
              { guard: 'attemptsRemain', target: 'wait' },
              {
                target: '#partition.failed',
                actions: { type: 'failRetriesExhausted', params: { after: 'observeFailed' } },
              },
            ],
          },
        },
        wait: { description: 'A cancellable wait before the next observation.', after: { retryWait: 'observeStore' } },
        observeSource: {
          description: "validate the broker's retained boundary before any external seek.",
          invoke: {
            id: 'observeSource',
            src: 'observeSource',
            input: ({ context }) => ({ partitions: [context.partition] }),
            onDone: [
              {
                guard: { type: 'sourceInvalid', params: observation },
                target: '#partition.failed',
                actions: { type: 'failSourceInvalid', params: observation },
              },
              {
                guard: { type: 'sourceBoundsExcludeFrontier', params: observation },
                target: '#partition.failed',
                actions: { type: 'failFrontierBeyondEnd', params: { frontier: 'saved' } },
              },
              { target: 'awaitingAssign', actions: { type: 'saveSourceBounds', params: observation } },
            ],
            onError: { target: '#partition.failed', actions: 'failSourceUnobservable' },
          },
        },
        // docs/design.md#library-facts: the position is set by assigning with an explicit offset inside the
        // rebalance callback (`seek` fails before fetching starts): the group does that assign.
        awaitingAssign: {
          description: 'Positioned: the group assigns the consumer at the frontier, with an explicit offset.',
          entry: 'reportPositioned',
          on: { POSITIONED: { target: '#partition.processing' } },
        },
      },
    },
    processing: {
      description: 'Owns the partition: decides each batch with the saved epoch and the expected frontier.',
      initial: 'idle',
      states: {
        idle: {
          description: 'Between decisions: waits for the next batch.',
          on: {
            BATCH: [
              {
                guard: { type: 'batchNotAhead', params: batch },
                target: '#partition.failed',
                actions: { type: 'failProtocolViolation', params: { violation: 'batchNotAhead' } },
              },
              {
                guard: { type: 'batchBoundsExcludeFrontier', params: batch },
                target: '#partition.failed',
                actions: { type: 'failFrontierBeyondEnd', params: { frontier: 'saved' } },
              },
              { target: 'deciding', actions: { type: 'beginDecision', params: batch } },
            ],
            RELEASE: { target: '#partition.retired', actions: 'retireOnRelease' },
          },
        },
        deciding: {
          description:
            '"(committing)": one decision in flight, retries and recovery included; a revocation waits for it to resolve.',
          on: { RELEASE: { actions: { type: 'noteRelease', params: releaseOf } } },
          after: { operationBudget: { target: '#partition.failed', actions: 'failBudgetExhausted' } },
          initial: 'committing',
          states: {
            committing: {
              description: 'One process attempt: the store commits the batch, or says why it did not.',
              entry: 'countAttempt',
              invoke: {
                id: 'process',
                src: 'process',
                input: ({ context }): ProcessRequest => ({
                  partition: context.partition,
                  records: context.batch,
                  epoch: context.token?.epoch ?? -1,
                  expectedFrontier: context.expectedFrontier ?? -1,
                }),
                onDone: [
                  {
                    guard: { type: 'acknowledgedAndReleased', params: answer },
                    target: '#partition.retired',
                    actions: [{ type: 'advanceToAcknowledged', params: answer }, 'endDecision', 'retireOnRelease'],
                  },
                  {
                    guard: { type: 'acknowledgedAtLastPlusOne', params: answer },
                    target: '#partition.processing.idle',
                    actions: [{ type: 'advanceToAcknowledged', params: answer }, 'endDecision', 'reportSettled'],
                  },
                  {
                    guard: { type: 'acknowledgedElsewhere', params: answer },
                    target: '#partition.failed',
                    actions: { type: 'failProtocolViolation', params: { violation: 'acknowledgedElsewhere' } },
                  },
                  {
                    guard: { type: 'answerWentBack', params: answer },
                    target: '#partition.failed',
                    actions: { type: 'failAnswerWentBack', params: answer },
                  },
                  {
                    guard: { type: 'revisionLost', params: answer },
                    target: '#partition.failed',
                    actions: { type: 'failRevisionLost', params: answer },
                  },
                  {
                    guard: { type: 'fenced', params: answer },
                    target: '#partition.retired',
                    actions: [
                      { type: 'setOutcome', params: { outcome: 'fenced' } },
                      { type: 'retireFenced', params: { seen: 'process' } },
                    ],
                  },
                  {
                    target: '#partition.retired',
                    actions: [
                      { type: 'setOutcome', params: { outcome: 'unexpected_frontier' } },
                      { type: 'retireUnexpectedFrontier', params: { seen: 'process' } },
                    ],
                  },
                ],
                onError: [
                  {
                    guard: { type: 'mayHaveCommitted', params: failure },
                    target: 'recovering',
                    actions: { type: 'setOutcome', params: { outcome: 'unknown' } },
                  },
                  {
                    guard: 'released',
                    target: '#partition.retired',
                    actions: [
                      { type: 'setOutcome', params: { outcome: 'failed_before_commit' } },
                      'endDecision',
                      'retireOnRelease',
                    ],
                  },
                  {
                    guard: 'attemptsRemain',
                    target: 'waiting',
                    actions: { type: 'setOutcome', params: { outcome: 'failed_before_commit' } },
                  },
                  {
                    target: '#partition.failed',
                    actions: { type: 'failRetriesExhausted', params: { after: 'processFailed' } },
                  },
                ],
              },
            },
            recovering: recoveringState,
            waiting: {
              description:
                'A cancellable wait before retrying the same records: nothing is in flight, so a release retires at once.',
              on: { RELEASE: { target: '#partition.retired', actions: ['endDecision', 'retireOnRelease'] } },
              after: { retryWait: 'committing' },
            },
          },
        },
      },
    },
    retired: {
      description:
        'Ownership ended (revoked, lost, stopped, fenced, foreign epoch, unexpected frontier); the process goes on.',
      type: 'final',
      entry: 'reportEnded',
    },
    failed: {
      description:
        'Retries or budget exhausted, an unresolved outcome or an invalid source: the process exits 1; an outage or a database that went back in time: the group rides and claims afresh.',
      type: 'final',
      entry: 'reportEnded',
    },
  },
});

export type PartitionMachine = typeof partitionMachine;

// What the chart hands its guards and actions from an event's fields, as typed params (function
// declarations, so the chart can come first; a service's answer: service-params.ts).

function batch({ event }: { event: BatchEvent }): BatchParams {
  return { records: event.records, bounds: event.bounds };
}

function releaseOf({ event }: { event: ReleaseEvent }): ReleaseParams {
  return { reason: event.reason };
}
