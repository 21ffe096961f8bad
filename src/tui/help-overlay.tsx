/**
 * `?`: what the keys do and what the partition states mean (docs/design.md#partition-lifecycle). The states and
 * their meanings are read from the partition chart's own descriptions, so help and machine
 * cannot drift apart; the `processing` subtree is shown whole (a worker spends its time there).
 */
import { Box, Text } from 'ink';
import type { AnyStateNode } from 'xstate';
import { partitionMachine } from '../machines/partition-machine.js';

function stateLines(node: AnyStateNode, expand: boolean): string[] {
  return Object.values(node.states).flatMap((child) => {
    const depth = child.path.length;
    const name = `${'  '.repeat(depth - 1)}${child.key}`.padEnd(14);
    const line = `  ${name} ${child.description ?? ''}`;
    const deeper = expand || child.key === 'processing';
    return deeper ? [line, ...stateLines(child, true)] : [line];
  });
}

export const helpLines = [
  'keys: q quit (a worker drains first) · ↑/↓ select a partition · esc deselect · ? close help',
  'states of a partition actor (the statechart value):',
  ...stateLines(partitionMachine.root, false),
  'frontier = next offset to decide (PostgreSQL); end = broker read-committed end; lag = end - frontier',
  'cfg = the configuration revision in force from the frontier on (amendsctl config-revise)',
  'other processes are shown from their heartbeat rows (about 1/s); "(stale)" = no beat for 5 s',
];

export function HelpOverlay({ width, lines }: { width: number; lines: number }) {
  if (lines <= 0) return null;
  return (
    <Box flexDirection="column" width={width}>
      {helpLines.slice(0, lines).map((line) => (
        <Text key={line} wrap="truncate">
          {line}
        </Text>
      ))}
    </Box>
  );
}
