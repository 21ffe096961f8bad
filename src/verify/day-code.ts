/**
 * A day as a number for the verifier's columns (issue 14: no string or object per (key, day)):
 * `YYYY-MM-DD` becomes YYYYMMDD, which orders like the text and round-trips exactly. Any text
 * of that digit shape has a code (the store's CHECK allows month 13 as text; the verifier must
 * still name such a row, not crash on it); other text has none.
 */

/** Above every digit-shaped code: codes the ledger gives to text of another shape. */
export const firstOddDayCode = 100_000_000;

/** YYYYMMDD for `DDDD-DD-DD` text, −1 for anything else. */
export function dayCode(day: string): number {
  if (day.length !== 10 || day.charCodeAt(4) !== 45 || day.charCodeAt(7) !== 45) return -1;
  let code = 0;
  for (let i = 0; i < 10; i++) {
    if (i === 4 || i === 7) continue;
    const digit = day.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    code = code * 10 + digit;
  }
  return code;
}

/** The text of a digit-shaped code. */
export function dayText(code: number): string {
  const text = String(code).padStart(8, '0');
  return `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6, 8)}`;
}
