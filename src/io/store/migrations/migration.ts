/** What a migration may depend on besides the tables: the schema the session works in. */
export interface MigrationContext {
  /** amends' own schema (database-schema.ts), where the tables are once migration 10 has run. */
  schema: string;
}

/** One versioned schema change. Versions count up from 1 without gaps; a released one never changes. */
export interface Migration {
  version: number;
  /** Short snake_case name, stored with the version so a diverged list is detected. */
  name: string;
  /** Runs inside the migration transaction; may hold several statements. */
  sql: string | ((context: MigrationContext) => string);
  /** Its statement timeout when longer than the default (a conversion of existing rows). */
  statementTimeoutMs?: number;
}
