/**
 * Decision outcomes and the decision record (docs/design.md#outcomes). Types only: the incremental
 * engine (decide.ts) and the independent oracle (src/verify/fast-oracle.ts) each apply the rules themselves.
 */

/** In precedence order: the first check that fails decides. */
export const outcomes = [
  'MALFORMED',
  'SCHEMA',
  'KEY_MISMATCH',
  'UNKNOWN_KEY',
  'ROUTING',
  'BEFORE_ORIGIN',
  'STALE',
  'DUPLICATE',
  'CONFLICT',
  'APPLIED',
] as const;
export type Outcome = (typeof outcomes)[number];

/** The one durable verdict for one source record. */
export interface Decision {
  partition: number;
  offset: number;
  outcome: Outcome;
  /** From the envelope; null when the envelope did not pass SCHEMA (docs/design.md#export). */
  item: string | null;
  location: string | null;
  txn: string | null;
  rev: number | null;
  quarantined: boolean;
  /** Human-readable reason for a quarantined outcome (free text, never compared); null otherwise. */
  detail: string | null;
}
