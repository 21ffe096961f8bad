/**
 * The façade over the actor system: callers (worker-composition.ts, the simulation) start a
 * runtime, feed it the consumer's rebalance callbacks and signals, and await its exit code.
 * They never see xstate's actors, except through `inspect` for the dashboard.
 *
 * Driving it from @confluentinc/kafka-javascript's KafkaConsumer (docs/design.md#library-facts):
 * - `rebalance_cb` (a `function`, not an arrow) is served inside `consume()`, i.e. inside the
 *   `poll` port. On ERR__ASSIGN_PARTITIONS call `partitionsAssigned(partitions)`; on
 *   ERR__REVOKE_PARTITIONS call `partitionsRevoked(this.assignmentLost())`. Do not call
 *   assign()/unassign() there: keep the callback's pending answer, and give it when the group
 *   calls the `assign` port (assign with explicit offsets) or the `unassign` port, whichever
 *   comes first; librdkafka waits for that call, and so does the whole eager group.
 * - Resolve the interrupted `poll` with whatever it fetched: its AbortSignal has fired, the
 *   records are dropped, and the next positions come from PostgreSQL.
 * - Outside a poll: `assign`/`unassign` are ordinary calls (a revocation that arrives while a
 *   decision is in flight is answered after the decision resolved).
 * - `close` runs after every partition is released and the consumer unassigned; the revoke
 *   callback that disconnect() fires then is answered with unassign() by the adapter itself.
 * - SIGINT/SIGTERM call `stop(signal)`; the process exits with `(await done).exitCode`.
 */
import { type ActorOptions, type AnyActorLogic, createActor, type InspectionEvent, type StateValue } from 'xstate';
import type { GroupCommand, GroupOutput } from '../../machines/group-machine.js';
import { OperationDeadlines } from '../../machines/operation-deadlines.js';
import type { WorkerPorts } from '../../machines/ports.js';
import type { WorkerSummary } from '../../machines/worker-summary.js';
import { provideGroupMachine } from './worker-services.js';

/** xstate's clock interface (setTimeout / clearTimeout), which it does not export by name. */
export type RuntimeClock = NonNullable<ActorOptions<AnyActorLogic>['clock']>;

export interface WorkerRuntimeOptions {
  namespace: string;
  batchSize?: number;
  /** `--outage-budget-s` in ms (default 30 s; 0: exit at the first transient failure). */
  outageBudgetMs?: number;
  ports: WorkerPorts;
  /** xstate's clock for the retry waits and budgets; a SimulatedClock in tests. */
  clock?: RuntimeClock;
  /** Every actor's events and snapshots: the dashboard's feed (docs/design.md#library-facts). */
  inspect?: (event: InspectionEvent) => void;
  /** The wall clock for the operation deadlines in `summary()`; without it they are null. */
  now?: () => number;
}

export interface WorkerRuntime {
  start(): void;
  /** From the rebalance callback (ERR__ASSIGN_PARTITIONS); the adapter then waits for `assign`. */
  partitionsAssigned(partitions: readonly number[]): void;
  /** From the rebalance callback (ERR__REVOKE_PARTITIONS); the adapter then waits for `unassign`. */
  partitionsRevoked(lost: boolean): void;
  /** SIGINT / SIGTERM: cancel, wait for guarded work, release, close. */
  stop(reason: string): void;
  /** Another PostgreSQL server answers (heartbeat-writer.ts): ride and claim afresh. */
  databaseChanged(detail: string): void;
  /** Resolves once the group is stopped (exit 0) or failed (exit 1). */
  readonly done: Promise<GroupOutput>;
  summary(): WorkerSummary;
  /** Stops every actor at once, without any cleanup: what a crash looks like (simulation). `done` then never settles. */
  abort(): void;
}

export function createWorkerRuntime(options: WorkerRuntimeOptions): WorkerRuntime {
  const machine = provideGroupMachine(options.ports);
  const deadlines = options.now === undefined ? undefined : new OperationDeadlines(options.now);
  const inspect = (event: InspectionEvent) => {
    if (deadlines !== undefined && event.type === '@xstate.snapshot') {
      // Inspection types the ref loosely; every actor of this system has an id.
      const id = (event.actorRef as { id?: string }).id ?? '';
      const snapshot = event.snapshot;
      if (id.startsWith('partition-') && 'value' in snapshot) deadlines.observe(id, snapshot.value as StateValue);
    }
    options.inspect?.(event);
  };
  const actor = createActor(machine, {
    input: { namespace: options.namespace, batchSize: options.batchSize, outageBudgetMs: options.outageBudgetMs },
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.inspect === undefined && deadlines === undefined ? {} : { inspect }),
  });
  let aborted = false;
  const done = new Promise<GroupOutput>((resolve, reject) => {
    actor.subscribe({
      complete: () => {
        const output = actor.getSnapshot().output;
        if (output !== undefined) resolve(output);
        else if (!aborted) reject(new Error('the group actor completed without an output'));
      },
      error: (error) => reject(error),
    });
  });
  // After the group stopped or failed nothing is listening: a late callback or signal is dropped.
  const send = (event: GroupCommand) => {
    if (actor.getSnapshot().status === 'active') actor.send(event);
  };
  return {
    start: () => {
      actor.start();
    },
    partitionsAssigned: (partitions) => send({ type: 'PARTITIONS_ASSIGNED', partitions }),
    partitionsRevoked: (lost) => send({ type: 'PARTITIONS_REVOKED', lost }),
    stop: (reason) => send({ type: 'STOP', reason }),
    databaseChanged: (detail) => send({ type: 'DATABASE_CHANGED', detail }),
    done,
    summary: () => {
      const snapshot = actor.getSnapshot();
      return {
        state: snapshot.value,
        context: snapshot.context,
        partitions: Object.entries(snapshot.children).flatMap(([id, child]) => {
          if (child === undefined || !id.startsWith('partition-')) return [];
          // The group's children are its partition actors and its service calls: only a machine has a value.
          const childSnapshot = child.getSnapshot();
          if (!('value' in childSnapshot)) return [];
          const deadlineAtMs = deadlines?.deadlineAtMs(id) ?? null;
          return [{ id, state: childSnapshot.value, context: childSnapshot.context, deadlineAtMs }];
        }),
      };
    },
    abort: () => {
      aborted = true;
      actor.stop();
    },
  };
}
