/**
 * Fixed widths and line budgets (docs/design.md#ink-and-meow): every row has the same width
 * whatever its content, and the whole frame stays shorter than the terminal, so ink never
 * clears the screen and the line count does not jump. Pure: the app passes the terminal size.
 */

export interface Column<K extends string> {
  key: K;
  title: string;
  width: number;
  /** Lower is more important: columns are dropped from the highest priority down. */
  priority: number;
  align?: 'left' | 'right';
}

/** The columns that fit in `columns` characters (one space between cells, one spare at the end). */
export function fitColumns<K extends string>(all: readonly Column<K>[], columns: number): Column<K>[] {
  const chosen = new Set<Column<K>>();
  let used = 0;
  for (const column of [...all].sort((a, b) => a.priority - b.priority)) {
    const cost = column.width + (chosen.size === 0 ? 0 : 1);
    if (used + cost > columns - 1) continue;
    chosen.add(column);
    used += cost;
  }
  return all.filter((c) => chosen.has(c));
}

/** `text` padded or cut to exactly `width` characters (an ellipsis marks a cut). */
export function cell(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  if (width <= 0) return '';
  if (text.length > width) return width === 1 ? '…' : `${text.slice(0, width - 1)}…`;
  return align === 'right' ? text.padStart(width) : text.padEnd(width);
}

export function numberText(value: number | null): string {
  return value === null ? '-' : String(value);
}

export interface SectionCounts {
  partitions: number;
  workers: number;
  recent: number;
  /** null when the timeline is not shown. */
  timeline: number | null;
  selected: boolean;
}

/** Lines given to each section, titles included; their sum is at most `rows - 1`. */
export interface SectionPlan {
  header: number;
  partitions: number;
  detail: number;
  workers: number;
  totals: number;
  timeline: number;
  recent: number;
  keys: number;
}

export const headerLines = 2;
export const detailLines = 4;
const workersShownMax = 4;
const timelineShownMax = 5;
const recentShownMax = 8;
const partitionsFirstMax = 3;

export function planSections(rows: number, counts: SectionCounts): SectionPlan {
  let left = Math.max(0, rows - 1);
  const take = (wanted: number) => {
    const given = Math.max(0, Math.min(wanted, left));
    left -= given;
    return given;
  };
  const plan: SectionPlan = {
    header: 0,
    partitions: 0,
    detail: 0,
    workers: 0,
    totals: 0,
    timeline: 0,
    recent: 0,
    keys: 0,
  };
  plan.header = take(headerLines);
  plan.keys = take(1);
  plan.totals = take(1);
  plan.partitions = take(1 + Math.min(counts.partitions, partitionsFirstMax));
  if (counts.selected) plan.detail = take(detailLines);
  plan.workers = take(1 + Math.max(1, Math.min(counts.workers, workersShownMax)));
  if (plan.partitions > 0) plan.partitions += take(counts.partitions - (plan.partitions - 1));
  if (counts.timeline !== null) plan.timeline = take(1 + Math.max(1, Math.min(counts.timeline, timelineShownMax)));
  if (left >= 2) plan.recent = take(1 + Math.min(Math.max(1, counts.recent), recentShownMax));
  return plan;
}

/** A window of `size` items of `count` that contains `index` (the selection stays visible). */
export function visibleWindow(count: number, size: number, index: number | null): { start: number; end: number } {
  if (size >= count) return { start: 0, end: count };
  const focus = index === null || index < 0 ? 0 : index;
  const start = Math.min(Math.max(0, focus - size + 1), count - size);
  return { start, end: start + size };
}
