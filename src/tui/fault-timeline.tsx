/** The fault timeline (showcase) or this worker's actor events: the latest entries, newest last. */
import { Box, Text } from 'ink';
import type { TimelineEntry } from './dashboard-model.js';

export interface FaultTimelineProps {
  entries: readonly TimelineEntry[];
  width: number;
  lines: number;
}

export function timelineText(entry: TimelineEntry): string {
  return `+${(entry.atMs / 1000).toFixed(1).padStart(6)}s ${entry.text}`;
}

export function FaultTimeline({ entries, width, lines }: FaultTimelineProps) {
  if (lines <= 0) return null;
  const room = lines - 1;
  const shown = room <= 0 ? [] : entries.slice(-room);
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate" bold>
        timeline
      </Text>
      {room > 0 && entries.length === 0 && (
        <Text wrap="truncate" dimColor>
          nothing yet
        </Text>
      )}
      {shown.map((e, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: entries are append-only; the index within the tail is stable enough for a one-line row.
        <Text key={`${e.atMs}:${i}`} wrap="truncate">
          {timelineText(e)}
        </Text>
      ))}
    </Box>
  );
}
