/**
 * Binds the ports to the machines' invoked services: thin promise actors, each passing the
 * AbortSignal xstate fires when the invoking state is left. No I/O happens here either.
 */
import { fromPromise } from 'xstate';
import { groupMachine } from '../../machines/group-machine.js';
import { partitionMachine } from '../../machines/partition-machine.js';
import type {
  PartitionPosition,
  PartitionRow,
  ProcessOutcome,
  ProcessRequest,
  SourceObservation,
  SourceRecord,
  WorkerPorts,
} from '../../machines/ports.js';

/** The partition machine with the store and the source observer behind its services. */
export function providePartitionMachine(ports: Pick<WorkerPorts, 'state' | 'source'>) {
  return partitionMachine.provide({
    actors: {
      claim: fromPromise<PartitionRow, { partition: number }>(({ input, signal }) =>
        ports.state.claim(input.partition, signal),
      ),
      observe: fromPromise<PartitionRow, { partition: number }>(({ input, signal }) =>
        ports.state.observe(input.partition, signal),
      ),
      process: fromPromise<ProcessOutcome, ProcessRequest>(({ input, signal }) => ports.state.process(input, signal)),
      observeSource: fromPromise<SourceObservation, { partitions: readonly number[] }>(({ input, signal }) =>
        ports.source.observe(input.partitions, signal),
      ),
    },
  });
}

/** The group machine with every port bound, its partition actors included. */
export function provideGroupMachine(ports: WorkerPorts) {
  return groupMachine.provide({
    actors: {
      partition: providePartitionMachine(ports),
      connect: fromPromise<void, void>(({ signal }) => ports.consumer.connect(signal)),
      poll: fromPromise<readonly SourceRecord[], { maxRecords: number }>(({ input, signal }) =>
        ports.consumer.poll(input.maxRecords, signal),
      ),
      observeSource: fromPromise<SourceObservation, { partitions: readonly number[] }>(({ input, signal }) =>
        ports.source.observe(input.partitions, signal),
      ),
      // Both dependencies must answer: the broker (with a valid source) and the database.
      probe: fromPromise<SourceObservation, { partitions: readonly number[] }>(async ({ input, signal }) => {
        const observation = await ports.source.observe(input.partitions, signal);
        for (const partition of input.partitions) await ports.state.observe(partition, signal);
        return observation;
      }),
      assign: fromPromise<void, { positions: readonly PartitionPosition[] }>(({ input, signal }) =>
        ports.consumer.assign(input.positions, signal),
      ),
      unassign: fromPromise<void, void>(({ signal }) => ports.consumer.unassign(signal)),
      close: fromPromise<void, void>(({ signal }) => ports.consumer.close(signal)),
    },
  });
}
