/**
 * Each partition's store operation deadline (docs/design.md#unknown-outcomes: claiming, seeking and deciding
 * each run under one shared `operationBudget`, an xstate delay started when the state is
 * entered). xstate does not expose a pending delay's due time, so this follows the actors'
 * snapshots: entering a state that carries the budget starts a deadline at `now() + budget`,
 * leaving it ends it. Retries inside the state keep the deadline, as the delay does. The
 * clock arrives as an input (the machines read none); without one there are no deadlines.
 */
import type { AnyStateNode, StateValue } from 'xstate';
import { operationBudgetMs } from './limits.js';
import { partitionMachine } from './partition-machine.js';

/** The state paths (e.g. `processing.deciding`) whose `after` holds the `operationBudget` delay. */
export function budgetedStatePaths(): string[] {
  const paths: string[] = [];
  const visit = (node: AnyStateNode) => {
    if (node.after.some((t) => t.delay === 'operationBudget')) paths.push(node.path.join('.'));
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(partitionMachine.root);
  return paths;
}

const budgeted = budgetedStatePaths();

/** The budgeted state `value` is in (at most one: they do not nest), or null. */
export function budgetedStateOf(value: StateValue): string | null {
  return budgeted.find((path) => inState(value, path.split('.'))) ?? null;
}

function inState(value: StateValue, path: readonly string[]): boolean {
  const [head, ...rest] = path;
  if (head === undefined) return true;
  if (typeof value === 'string') return value === head && rest.length === 0;
  const child = value[head];
  return child !== undefined && inState(child as StateValue, rest);
}

/** Per actor id: the budgeted state it is in and when that state's budget runs out (ms since the epoch). */
export class OperationDeadlines {
  private readonly byActor = new Map<string, { state: string; deadlineAtMs: number }>();

  constructor(private readonly now: () => number) {}

  /** From each partition actor snapshot; a new budgeted state starts a new deadline. */
  observe(actorId: string, value: StateValue): void {
    const state = budgetedStateOf(value);
    if (state === null) {
      this.byActor.delete(actorId);
    } else if (this.byActor.get(actorId)?.state !== state) {
      this.byActor.set(actorId, { state, deadlineAtMs: this.now() + operationBudgetMs });
    }
  }

  deadlineAtMs(actorId: string): number | null {
    return this.byActor.get(actorId)?.deadlineAtMs ?? null;
  }

  forget(actorId: string): void {
    this.byActor.delete(actorId);
  }
}
