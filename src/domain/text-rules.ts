/** Text rules shared by the configuration and the envelope (docs/design.md#configuration, #envelope). */

const textLengthMax = 64;

/** Control characters per docs/design.md#envelope: U+0000–U+001F and U+007F–U+009F. */
export function hasControlCharacter(s: string): boolean {
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/** Length in Unicode code points, not UTF-16 units. */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** 1–64 code points, no control characters: item and location names. */
export function isTextField(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const n = codePointLength(v);
  return n >= 1 && n <= textLengthMax && !hasControlCharacter(v);
}

/** A real calendar date written YYYY-MM-DD (proleptic Gregorian, years 0001–9999). */
export function isCalendarDate(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}
