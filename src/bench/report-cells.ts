/** The cells of the bench's printed tables: figures that may be missing, whole numbers, fixed digits, aligned columns. */

export function columns(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length))) ?? [];
  const line = (row: string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0] as string[]), rule, ...rows.slice(1).map(line)].join('\n');
}

/** A figure that may be missing (null: not measured, e.g. a restart that never decided). */
export function fig(n: number | null, digits: number): string {
  return n === null ? 'n/a' : fixed(n, digits);
}

export function whole(n: number | null): string {
  if (n === null) return 'n/a';
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en') : String(n);
}

export function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}
