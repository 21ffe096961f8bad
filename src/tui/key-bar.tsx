/** The last line: the keys. */
import { Text } from 'ink';

export const keyBarText = 'q quit · ↑/↓ select partition · esc deselect · ? help';

export function KeyBar({ width, stopping }: { width: number; stopping?: string | null }) {
  return (
    <Text wrap="truncate" dimColor>
      {(stopping ? `${stopping} · ` : '') + keyBarText.slice(0, Math.max(0, width - 1))}
    </Text>
  );
}
