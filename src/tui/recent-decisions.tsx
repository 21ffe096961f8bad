/** The last decisions, oldest first (bounded: dashboard-model.ts recentDecisionsMax). */
import { Box, Text } from 'ink';
import type { RecentDecisionView } from './dashboard-model.js';
import { outcomeColor } from './state-colors.js';

export interface RecentDecisionsProps {
  recent: readonly RecentDecisionView[];
  width: number;
  lines: number;
}

export function decisionText(d: RecentDecisionView): string {
  const rev = d.rev === null ? '' : ` rev ${d.rev}`;
  return `p${d.partition} @${d.offset} ${d.outcome}${d.txn === null ? '' : ` ${d.txn}`}${rev}`;
}

export function RecentDecisions({ recent, width, lines }: RecentDecisionsProps) {
  if (lines <= 0) return null;
  const room = lines - 1;
  const shown = room <= 0 ? [] : recent.slice(-room);
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate" bold>
        {`recent decisions (last ${shown.length} of ${recent.length})`}
      </Text>
      {room > 0 && recent.length === 0 && (
        <Text wrap="truncate" dimColor>
          none yet
        </Text>
      )}
      {shown.map((d) => (
        <Text key={`${d.partition}:${d.offset}`} wrap="truncate" {...optionalColor(outcomeColor(d.outcome))}>
          {decisionText(d)}
        </Text>
      ))}
    </Box>
  );
}

function optionalColor(color: string | undefined): { color?: string } {
  return color === undefined ? {} : { color };
}
