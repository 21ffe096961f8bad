/**
 * The three formats of `amendsctl balances` (docs/design.md#balances), each a header (maybe empty)
 * and one line per balance, so rows stream out as they are read:
 * - table: for people; the columns take their widths from the first page of rows (a streamed
 *   table cannot know later ones), a wider later cell just pushes its line;
 * - jsonl: one JSON object per line, keys in the order shown in the docs;
 * - csv: RFC 4180 with a header line, fields quoted when they hold a comma, a quote or a line
 *   break, lines ending CRLF, as spreadsheets expect.
 */
import type { BalanceRow } from '../io/store/balance-pages.js';
import { tableLine } from './text-table.js';

export const balanceFormats = ['table', 'jsonl', 'csv'] as const;
export type BalanceFormat = (typeof balanceFormats)[number];

const columns = ['item', 'location', 'day', 'closing', 'status', 'version', 'cause_partition', 'cause_offset'];

function cells(row: BalanceRow): string[] {
  return [
    row.item,
    row.location,
    row.day,
    String(row.closing),
    row.status,
    String(row.version),
    String(row.cause.partition),
    String(row.cause.offset),
  ];
}

export function jsonLine(row: BalanceRow): string {
  return `${JSON.stringify({
    item: row.item,
    location: row.location,
    day: row.day,
    closing: row.closing,
    status: row.status,
    version: row.version,
    cause: row.cause,
  })}\n`;
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export function csvLine(values: readonly string[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** The lines of one format: `first` sees the first page (the table's widths), `line` each row. */
export interface BalanceWriter {
  header(firstPage: readonly BalanceRow[]): string;
  line(row: BalanceRow): string;
}

export function balanceWriter(format: BalanceFormat): BalanceWriter {
  if (format === 'jsonl') return { header: () => '', line: jsonLine };
  if (format === 'csv') return { header: () => csvLine(columns), line: (row) => csvLine(cells(row)) };
  let widths: number[] = [];
  return {
    header(firstPage) {
      widths = columns.map((c, i) => Math.max(c.length, ...firstPage.map((r) => (cells(r)[i] ?? '').length)));
      return `${tableLine(columns, widths)}\n`;
    },
    line: (row) => `${tableLine(cells(row), widths)}\n`,
  };
}
