/** Calendar-day arithmetic on `YYYY-MM-DD` strings (UTC, so no time zone can shift a day). */
const dayMs = 86_400_000;

/** The calendar day `days` after `day`. */
export function addDays(day: string, days: number): string {
  const at = Date.parse(`${day}T00:00:00Z`);
  if (!Number.isFinite(at)) throw new RangeError(`${day} is not a date`);
  return new Date(at + days * dayMs).toISOString().slice(0, 10);
}
