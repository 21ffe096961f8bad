/**
 * The partition chart's `processing.deciding.recovering` state (partition-machine.ts): after an
 * unknown `process` outcome, the recovery table of docs/design.md#unknown-outcomes, one
 * transition per row, read from a fresh observation of the partition row. A row below this
 * owner's own (the database went back in time) is no other owner's: the group rides.
 */
import { partitionSetup } from './partition-setup.js';
import { row, rowSeenBy } from './service-params.js';

export const recoveringState = partitionSetup.createStateConfig({
  description: '"unknown-recovery": re-read epoch and frontier before anything else (docs/design.md#unknown-outcomes).',
  invoke: {
    id: 'observe',
    src: 'observe',
    input: ({ context }) => ({ partition: context.partition }),
    onDone: [
      {
        guard: { type: 'observedCommittedAndReleased', params: row },
        target: '#partition.retired',
        actions: [{ type: 'advanceToObserved', params: row }, 'endDecision', 'retireOnRelease'],
      },
      {
        guard: { type: 'observedCommitted', params: row },
        target: '#partition.processing.idle',
        actions: [{ type: 'advanceToObserved', params: row }, 'endDecision', 'reportSettled'],
      },
      {
        guard: { type: 'observedNotCommittedAndReleased', params: row },
        target: '#partition.retired',
        actions: [{ type: 'setOutcome', params: { outcome: 'not_committed' } }, 'endDecision', 'retireOnRelease'],
      },
      {
        guard: { type: 'observedNotCommittedAndAttemptsRemain', params: row },
        target: 'waiting',
        actions: { type: 'setOutcome', params: { outcome: 'not_committed' } },
      },
      {
        guard: { type: 'observedNotCommitted', params: row },
        target: '#partition.failed',
        actions: { type: 'failRetriesExhausted', params: { after: 'processNotCommitted' } },
      },
      {
        guard: { type: 'rowWentBack', params: row },
        target: '#partition.failed',
        actions: { type: 'failRowWentBack', params: rowSeenBy('recovery') },
      },
      {
        guard: { type: 'observedForeignEpoch', params: row },
        target: '#partition.retired',
        actions: { type: 'retireFenced', params: { seen: 'recovery' } },
      },
      {
        target: '#partition.retired',
        actions: { type: 'retireUnexpectedFrontier', params: { seen: 'recovery' } },
      },
    ],
    onError: { target: '#partition.failed', actions: 'failOutcomeUnresolved' },
  },
});
