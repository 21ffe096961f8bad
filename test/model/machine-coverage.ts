/**
 * What "every state and every transition" means, computed from a machine's definition, and
 * what a run actually covered, read from xstate's inspection stream (`@xstate.microstep`).
 *
 * A transition is identified by its source state node, its event descriptor and its index
 * among that node's candidates for the event (guarded alternatives are separate transitions).
 */
import type { AnyStateMachine, InspectionEvent, StateValue } from 'xstate';
import { getStateNodes } from 'xstate/graph';

interface TransitionLike {
  source: { id: string; transitions: Map<string, unknown[]>; always?: unknown[] };
  eventType: string;
}

export function transitionKey(t: TransitionLike): string {
  const always = t.source.always ?? [];
  const alwaysIndex = always.indexOf(t);
  if (alwaysIndex >= 0) return `${t.source.id} —(always #${alwaysIndex})→`;
  const index = t.source.transitions.get(t.eventType)?.indexOf(t) ?? -1;
  return `${t.source.id} —${t.eventType} #${index}→`;
}

/** Every transition of the machine, as keys. */
export function allTransitions(machine: AnyStateMachine): string[] {
  const nodes = [machine.root, ...getStateNodes(machine.root)];
  const keys: string[] = [];
  for (const node of nodes) {
    for (const list of node.transitions.values()) {
      for (const t of list) keys.push(transitionKey(t as unknown as TransitionLike));
    }
    for (const t of node.always ?? []) keys.push(transitionKey(t as unknown as TransitionLike));
  }
  return keys.sort();
}

/** Every state node id but the root. */
export function allStates(machine: AnyStateMachine): string[] {
  return getStateNodes(machine.root)
    .map((n) => n.id)
    .sort();
}

/** The state node ids a state value is in, ancestors included. */
export function statesOf(machineId: string, value: StateValue): string[] {
  if (typeof value === 'string') return [`${machineId}.${value}`];
  return Object.entries(value).flatMap(([key, child]) => [
    `${machineId}.${key}`,
    ...(child === undefined ? [] : statesOf(`${machineId}.${key}`, child)),
  ]);
}

/** Collects the transitions and states a running actor system takes, per machine id. */
export class CoverageRecorder {
  readonly transitions = new Map<string, Set<string>>();
  readonly states = new Map<string, Set<string>>();

  readonly inspect = (event: InspectionEvent): void => {
    if (event.type !== '@xstate.microstep' && event.type !== '@xstate.snapshot') return;
    const snapshot = event.snapshot as { machine?: { id: string }; value?: StateValue };
    const machineId = snapshot.machine?.id;
    if (machineId === undefined || snapshot.value === undefined) return;
    if (event.type === '@xstate.microstep') {
      const transitions = this.for(this.transitions, machineId);
      for (const t of (event as unknown as { _transitions: TransitionLike[] })._transitions) {
        transitions.add(transitionKey(t));
      }
    }
    const states = this.for(this.states, machineId);
    for (const id of statesOf(machineId, snapshot.value)) states.add(id);
  };

  private for(map: Map<string, Set<string>>, id: string): Set<string> {
    let set = map.get(id);
    if (set === undefined) {
      set = new Set();
      map.set(id, set);
    }
    return set;
  }

  transitionsOf(machineId: string): string[] {
    return [...(this.transitions.get(machineId) ?? [])].sort();
  }

  statesOf(machineId: string): string[] {
    return [...(this.states.get(machineId) ?? [])].sort();
  }
}
