/** One immutable version of one (item, location, day) closing balance (docs/design.md#output-versions). */
export type BalanceStatus = 'NEGATIVE' | 'LOW' | 'OK';

export interface OutputVersion {
  item: string;
  location: string;
  day: string;
  /** Counts per (item, location, day) from 1, retractions included. */
  version: number;
  /** null exactly when retracted. */
  closing: number | null;
  status: BalanceStatus | null;
  retracted: boolean;
  /** The source record whose decision created this version. */
  cause: { partition: number; offset: number };
}
