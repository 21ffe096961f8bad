/**
 * Transition coverage from xstate/graph: the adjacency map of a traversal, and for every edge
 * (vertex, event) the shortest path to the vertex followed by that edge.
 */
import type { AnyStateMachine, EventObject, SnapshotFrom } from 'xstate';
import { getAdjacencyMap, getShortestPaths } from 'xstate/graph';

export interface EdgePath<TSnapshot, TEvent> {
  /** The events from the initial state, each with the state the traversal reached after it. */
  steps: { event: TEvent; state: TSnapshot }[];
}

export interface Traversal<TMachine extends AnyStateMachine, TEvent extends EventObject> {
  serializeState: (snapshot: SnapshotFrom<TMachine>) => string;
  events: (snapshot: SnapshotFrom<TMachine>) => TEvent[];
  input: unknown;
  /** An event the system produces by itself (no stimulus): a path ending before it is extended. */
  forced?: (event: TEvent) => boolean;
}

export function edgePaths<TMachine extends AnyStateMachine, TEvent extends EventObject>(
  machine: TMachine,
  traversal: Traversal<TMachine, TEvent>,
): { vertices: number; paths: EdgePath<SnapshotFrom<TMachine>, TEvent>[] } {
  // biome-ignore lint/suspicious/noExplicitAny: xstate/graph's option types do not follow provided machines
  const options: any = {
    serializeState: traversal.serializeState,
    events: traversal.events,
    input: traversal.input,
    limit: 100_000,
  };
  const adjacency = getAdjacencyMap(machine, options);
  const shortest = getShortestPaths(machine, options);
  const heads = new Map<string, { event: TEvent; state: SnapshotFrom<TMachine> }[]>();
  for (const path of shortest) {
    const steps = path.steps.slice(1) as unknown as { event: TEvent; state: SnapshotFrom<TMachine> }[];
    heads.set(traversal.serializeState(path.state as SnapshotFrom<TMachine>), steps);
  }
  const paths: EdgePath<SnapshotFrom<TMachine>, TEvent>[] = [];
  for (const [key, vertex] of Object.entries(adjacency)) {
    const head = heads.get(key);
    if (head === undefined) throw new Error(`no shortest path to ${key}`);
    for (const edge of Object.values(vertex.transitions) as { event: unknown; state: unknown }[]) {
      const steps = [...head, { event: edge.event as TEvent, state: edge.state as SnapshotFrom<TMachine> }];
      // Follow forced edges, so a path never ends where the real system cannot rest.
      for (;;) {
        const last = steps[steps.length - 1];
        const next =
          last === undefined
            ? undefined
            : (adjacency as Record<string, (typeof adjacency)[keyof typeof adjacency]>)[
                traversal.serializeState(last.state)
              ];
        const edges =
          next === undefined ? [] : (Object.values(next.transitions) as { event: TEvent; state: unknown }[]);
        const only = edges[0];
        if (edges.length !== 1 || only === undefined || !traversal.forced?.(only.event)) break;
        steps.push({ event: only.event, state: only.state as SnapshotFrom<TMachine> });
      }
      paths.push({ steps });
    }
  }
  return { vertices: Object.keys(adjacency).length, paths };
}
