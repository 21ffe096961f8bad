/**
 * The bounded verifier's report (docs/design.md#bounded-verifier, `verify --json`): the verdict, why it is
 * not PASS, each source partition's frontier against its bound, what was compared, and the
 * first differences. The same object is printed by `--json` and returned by `runVerify`,
 * which adds `stats` (phase timings and peak memory) once the comparison is done.
 */
import type { VerifyStats } from './verify-stats.js';

export type Verdict = 'PASS' | 'FAIL' | 'INCOMPLETE';

/** Where a difference was found: the source side (decision, output, quarantine) or the transport. */
export type DifferenceKind = 'decision' | 'output' | 'quarantine' | 'outbox' | 'topic' | 'view';
export const differenceKinds: readonly DifferenceKind[] = [
  'decision',
  'output',
  'quarantine',
  'outbox',
  'topic',
  'view',
];

export interface Difference {
  kind: DifferenceKind;
  /** `partition:offset` for decisions and quarantine, `item@location day vN` for versions. */
  key: string;
  /** What the oracle (or the database, for the view) says; null when nothing should be there. */
  want: unknown;
  /** What was found; null when it is missing. */
  got: unknown;
}

/** docs/design.md#verification: `differences` holds at most 100 entries (the reasons count them all). */
export const listedDifferencesMax = 100;

export interface VerifyDocument {
  verdict: Verdict;
  /** Why the verdict is not PASS; on a PASS only what could not be compared (no output binding). */
  reasons: string[];
  partitions: { partition: number; frontier: number; end: number }[];
  counts: {
    /** Source records read in [0, end) of every partition. */
    records: number;
    decisions: number;
    outputs: number;
    quarantine: number;
    outbox_pending: number;
    view_rows: number;
  };
  differences: Difference[];
  /** Set by `runVerify`; the pure comparison leaves it out. */
  stats?: VerifyStats;
}
