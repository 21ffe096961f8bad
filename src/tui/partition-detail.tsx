/**
 * The selected partition: its statechart path and the context that matters (epoch, the
 * configuration revision in force from the frontier on, attempts, deadline).
 */
import { Box, Text } from 'ink';
import type { PartitionView } from './dashboard-model.js';
import { numberText } from './layout.js';
import { stateColor } from './state-colors.js';

export interface PartitionDetailProps {
  partition: PartitionView;
  width: number;
  lines: number;
}

/** "processing.deciding.committing" → "processing › deciding › committing". */
export function statePath(state: string): string {
  return state.split('.').join(' › ');
}

export function PartitionDetail({ partition: p, width, lines }: PartitionDetailProps) {
  if (lines <= 0) return null;
  const rows = [
    `context  epoch ${numberText(p.epoch)} · config revision ${numberText(p.configRevision)} · frontier ${numberText(p.frontier)} · end ${numberText(p.end)} · lag ${numberText(p.lag)} · owner ${p.owner ?? '-'}`,
    `operation ${p.operation ?? '-'} · attempts ${numberText(p.attempts)} · deadline ${deadlineText(p.deadlineInMs)} · last outcome ${p.lastOutcome ?? '-'}`,
    p.endReason === null ? null : `ended    ${p.endReason}`,
  ].filter((r): r is string => r !== null);
  const color = stateColor(p.state);
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate" bold>
        {`partition ${p.partition} · path `}
        <Text {...(color === undefined ? {} : { color })}>{statePath(p.state)}</Text>
      </Text>
      {rows.slice(0, lines - 1).map((r) => (
        <Text key={r} wrap="truncate">
          {r}
        </Text>
      ))}
    </Box>
  );
}

/** Time left of the operation's budget: `in 12.3 s`, `passed` once it ran out, `-` between operations. */
function deadlineText(ms: number | null): string {
  if (ms === null) return '-';
  return ms > 0 ? `in ${(ms / 1000).toFixed(1)} s` : 'passed';
}
