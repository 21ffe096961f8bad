/** Two lines: what namespace and topic this is, and where it comes from (never credentials). */
import { Box, Text } from 'ink';
import type { DashboardHeader as HeaderData } from './dashboard-model.js';

export interface DashboardHeaderProps {
  header: HeaderData;
  feedError: string | null;
  loaded: boolean;
  width: number;
  lines: number;
}

export function DashboardHeader({ header, feedError, loaded, width, lines }: DashboardHeaderProps) {
  if (lines <= 0) return null;
  const first = `amends ${header.mode} · namespace ${header.namespace} · topic ${header.sourceTopic} (${header.incarnation})`;
  // The log file first: it is where this process's diagnostics are while the screen is taken.
  const where = `${header.logFile === null ? '' : `logs ${header.logFile} · `}brokers ${header.brokers} · db ${header.database}`;
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate" bold>
        {first}
      </Text>
      {lines > 1 &&
        (feedError !== null ? (
          <Text wrap="truncate" color="red">
            {`feed: ${feedError}`}
          </Text>
        ) : (
          <Text wrap="truncate" dimColor>
            {loaded ? where : `${where} · waiting for the first sample…`}
          </Text>
        ))}
    </Box>
  );
}
