/** `?`: what the keys do and what the partition states mean (worker.md §4). */
import { Box, Text } from 'ink';

export const helpLines = [
  'keys: q quit (a worker drains first) · ↑/↓ select a partition · esc deselect · ? close help',
  'states of a partition actor (the statechart value):',
  '  unassigned   no worker owns it',
  '  claiming     raising the epoch in PostgreSQL (the ownership token)',
  '  seeking      reading the frontier, positioning the consumer there',
  '  processing   idle between polls; deciding.committing = one transaction in flight',
  '  recovering   a commit outcome is unknown: reading it back before anything else',
  '  retired      released (revoked, lost, stopped) or fenced by a newer epoch',
  '  failed       retries or budget exhausted, or an unresolved outcome: the worker exits 1',
  'frontier = next offset to decide (PostgreSQL); end = broker read-committed end; lag = end - frontier',
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
