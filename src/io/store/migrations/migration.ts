/** One versioned schema change. Versions count up from 1 without gaps; a released one never changes. */
export interface Migration {
  version: number;
  /** Short snake_case name, stored with the version so a diverged list is detected. */
  name: string;
  /** Runs inside the migration transaction; may hold several statements. */
  sql: string;
  /** Its statement timeout when longer than the default (a conversion of existing rows). */
  statementTimeoutMs?: number;
}
