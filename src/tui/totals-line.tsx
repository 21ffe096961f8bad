/** One line: decisions by outcome, quarantine, outbox pending and the view's lag. */
import { Text } from 'ink';

export interface TotalsLineProps {
  counts: Record<string, number>;
  quarantine: number | null;
  outbox: { pending: number; published: number } | null;
  viewLag: number | null;
  width: number;
}

export function totalsText({ counts, quarantine, outbox, viewLag }: Omit<TotalsLineProps, 'width'>): string {
  const decided = Object.entries(counts).filter(([, n]) => n > 0);
  const decisions = decided.length === 0 ? 'no decisions' : decided.map(([o, n]) => `${o} ${n}`).join(' ');
  const q = `quarantine ${quarantine ?? '-'}`;
  const o = outbox === null ? 'outbox -' : `outbox ${outbox.pending} pending`;
  const v = `view lag ${viewLag ?? '-'}`;
  return `${decisions} · ${q} · ${o} · ${v}`;
}

export function TotalsLine(props: TotalsLineProps) {
  return <Text wrap="truncate">{totalsText(props).slice(0, Math.max(0, props.width - 1))}</Text>;
}
