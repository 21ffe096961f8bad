/** One row of fixed-width cells: every row of a table has the same width and one line. */
import { Box, Text } from 'ink';
import { type Column, cell } from './layout.js';

export interface TableRowProps<K extends string> {
  columns: readonly Column<K>[];
  values: Record<K, string>;
  colors?: Partial<Record<K, string>>;
  bold?: boolean;
  inverse?: boolean;
  dim?: boolean;
}

export function TableRow<K extends string>({ columns, values, colors, bold, inverse, dim }: TableRowProps<K>) {
  return (
    <Box flexDirection="row" height={1}>
      {columns.map((column, i) => (
        <Text
          key={column.key}
          wrap="truncate"
          bold={bold ?? false}
          inverse={inverse ?? false}
          dimColor={dim ?? false}
          {...(colors?.[column.key] === undefined ? {} : { color: colors[column.key] })}
        >
          {(i === 0 ? '' : ' ') + cell(values[column.key], column.width, column.align)}
        </Text>
      ))}
    </Box>
  );
}
