/**
 * One row per partition: its statechart state, owner, epoch, configuration revision (`cfg`:
 * `rev` is a record's revision in the recent decisions), frontier, end, lag, outcome, rate.
 */
import { Box, Text } from 'ink';
import type { PartitionView } from './dashboard-model.js';
import { type Column, fitColumns, numberText, visibleWindow } from './layout.js';
import { stateColor } from './state-colors.js';
import { TableRow } from './table-row.js';

type Key = 'partition' | 'state' | 'owner' | 'epoch' | 'revision' | 'frontier' | 'end' | 'lag' | 'outcome' | 'rate';

export const partitionColumns: readonly Column<Key>[] = [
  { key: 'partition', title: 'p', width: 3, priority: 0, align: 'right' },
  { key: 'state', title: 'state', width: 30, priority: 0 },
  { key: 'owner', title: 'owner', width: 18, priority: 4 },
  { key: 'epoch', title: 'epoch', width: 5, priority: 2, align: 'right' },
  { key: 'revision', title: 'cfg', width: 3, priority: 3, align: 'right' },
  { key: 'frontier', title: 'frontier', width: 8, priority: 0, align: 'right' },
  { key: 'end', title: 'end', width: 8, priority: 1, align: 'right' },
  { key: 'lag', title: 'lag', width: 6, priority: 0, align: 'right' },
  { key: 'outcome', title: 'last outcome', width: 14, priority: 5 },
  { key: 'rate', title: 'rec/s', width: 7, priority: 3, align: 'right' },
];

export interface PartitionTableProps {
  partitions: readonly PartitionView[];
  selected: number | null;
  width: number;
  /** Lines available, title included. */
  lines: number;
}

export function rateText(rate: number | null): string {
  if (rate === null) return '-';
  return rate >= 100 ? rate.toFixed(0) : rate.toFixed(1);
}

export function PartitionTable({ partitions, selected, width, lines }: PartitionTableProps) {
  if (lines <= 0) return null;
  const columns = fitColumns(partitionColumns, width);
  const titles = Object.fromEntries(partitionColumns.map((c) => [c.key, c.title])) as Record<Key, string>;
  const index = partitions.findIndex((p) => p.partition === selected);
  const room = lines - 1;
  const hidden = partitions.length > room;
  // When rows are hidden, the last line says how many.
  const shown = hidden ? Math.max(0, room - 1) : room;
  const { start, end } = visibleWindow(partitions.length, shown, index < 0 ? null : index);
  return (
    <Box flexDirection="column" width={width}>
      <TableRow columns={columns} values={titles} bold />
      {partitions.slice(start, end).map((p) => (
        <TableRow
          key={p.partition}
          columns={columns}
          inverse={p.partition === selected}
          values={{
            partition: String(p.partition),
            state: p.state,
            owner: p.owner ?? '-',
            epoch: numberText(p.epoch),
            revision: numberText(p.configRevision),
            frontier: numberText(p.frontier),
            end: numberText(p.end),
            lag: numberText(p.lag),
            outcome: p.lastOutcome ?? '-',
            rate: rateText(p.recordsPerSecond),
          }}
          colors={{ state: stateColor(p.state) }}
        />
      ))}
      {hidden && room > 0 && (
        <Text wrap="truncate" dimColor>
          {`… ${partitions.length - (end - start)} more partitions (↑/↓ to scroll)`}
        </Text>
      )}
    </Box>
  );
}
