/**
 * PostgreSQL int8 values as JavaScript numbers. pg returns int8 as text (a double cannot
 * hold every int8); amends keeps offsets, epochs and balances below 2^53 (ports.ts), so
 * each read is checked here and converted, never rounded silently.
 */
import { assertInvariant } from './invariant.js';

const integerText = /^-?[0-9]+$/;

/** An int8 column value (text from pg, or a number from json) → a safe integer, or a loud failure. */
export function int8ToSafeInteger(value: unknown, what: string): number {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && integerText.test(value) ? Number(value) : NaN;
  // Every integer text beyond 2^53 - 1 converts to a double ≥ 2^53, which is not a safe integer.
  assertInvariant(Number.isSafeInteger(n), `${what} is not a safe integer: ${String(value)}`);
  return n;
}

/** The same for a nullable column. */
export function nullableInt8ToSafeInteger(value: unknown, what: string): number | null {
  return value === null ? null : int8ToSafeInteger(value, what);
}
