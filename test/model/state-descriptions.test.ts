/**
 * Every state of both lifecycle machines says what it is (worker.md §4's words): the dashboard's
 * help can show it, and a newcomer reads the chart with it.
 */
import { describe, expect, test } from 'vitest';
import type { AnyStateMachine } from 'xstate';
import { getStateNodes } from 'xstate/graph';
import { groupMachine } from '../../src/machines/group-machine.js';
import { partitionMachine } from '../../src/machines/partition-machine.js';

function undescribed(machine: AnyStateMachine): string[] {
  return getStateNodes(machine.root)
    .filter((node) => (node.description ?? '').trim() === '')
    .map((node) => node.id);
}

describe('state descriptions', () => {
  test.each([
    ['partition', partitionMachine],
    ['group', groupMachine],
  ])('every state of the %s machine has a description', (_, machine) => {
    expect(getStateNodes(machine.root).length).toBeGreaterThan(0);
    expect(undescribed(machine)).toEqual([]);
  });
});
