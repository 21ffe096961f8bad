/** A plain-text table for people: columns padded to their widest cell, two spaces apart, no trailing blanks. */
export function textTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [headers, ...rows].map((cells) => tableLine(cells, widths)).join('\n');
}

/** One line of cells padded to `widths` (a streamed table fixes them from its first rows). */
export function tableLine(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((c, i) => c.padEnd(widths[i] ?? 0))
    .join('  ')
    .trimEnd();
}
