/** Each worker process seen: id, role, pid, its group actor's state and heartbeat age. */
import { Box, Text } from 'ink';
import type { WorkerView } from './dashboard-model.js';
import { type Column, fitColumns } from './layout.js';
import { stateColor } from './state-colors.js';
import { TableRow } from './table-row.js';

type Key = 'id' | 'role' | 'pid' | 'group' | 'age';

export const workerColumns: readonly Column<Key>[] = [
  { key: 'id', title: 'worker', width: 26, priority: 0 },
  { key: 'role', title: 'role', width: 6, priority: 2 },
  { key: 'pid', title: 'pid', width: 7, priority: 1, align: 'right' },
  { key: 'group', title: 'group state', width: 22, priority: 0 },
  { key: 'age', title: 'heartbeat', width: 9, priority: 0, align: 'right' },
];

export function ageText(worker: WorkerView): string {
  if (worker.local) return 'this';
  if (worker.heartbeatAgeMs === null) return '-';
  return `${(worker.heartbeatAgeMs / 1000).toFixed(1)}s`;
}

export interface WorkersTableProps {
  workers: readonly WorkerView[];
  width: number;
  lines: number;
}

export function WorkersTable({ workers, width, lines }: WorkersTableProps) {
  if (lines <= 0) return null;
  const columns = fitColumns(workerColumns, width);
  if (workers.length === 0) {
    return (
      <Box flexDirection="column" width={width}>
        <Text wrap="truncate" bold>
          workers
        </Text>
        {lines > 1 && (
          <Text wrap="truncate" dimColor>
            none seen (no heartbeat rows for this namespace)
          </Text>
        )}
      </Box>
    );
  }
  const room = lines - 1;
  const hidden = workers.length > room;
  const shown = hidden ? Math.max(0, room - 1) : room;
  return (
    <Box flexDirection="column" width={width}>
      <TableRow
        columns={columns}
        values={{ id: 'worker', role: 'role', pid: 'pid', group: 'group state', age: 'heartbeat' }}
        bold
      />
      {workers.slice(0, shown).map((w) => (
        <TableRow
          key={w.id}
          columns={columns}
          values={{ id: w.id, role: w.role, pid: String(w.pid), group: w.groupState, age: ageText(w) }}
          colors={{ group: stateColor(w.groupState) }}
        />
      ))}
      {hidden && room > 0 && (
        <Text wrap="truncate" dimColor>
          {`… ${workers.length - shown} more processes`}
        </Text>
      )}
    </Box>
  );
}
