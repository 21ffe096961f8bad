/**
 * `amendsctl migrate [--json]` (issue 35): brings the database's amends schema up to this
 * build's, as an explicit step run by the role that owns the tables, so that the processes
 * can run as a role that may not create or alter anything (`--no-migrate`). The same
 * transaction and advisory lock as every process's own migration (migrations.ts): two at once
 * are safe, and one that fails changes nothing.
 */

import { databaseSchema } from '../../io/store/database-schema.js';
import { knownSchemaVersion, migrations } from '../../io/store/migrations.js';
import { Database, databaseTarget, databaseUrlFrom } from '../../io/store/postgres.js';
import { defineCommand } from '../command.js';
import { refuseArguments } from '../flag-check.js';

export const migrateCommand = defineCommand({
  name: 'migrate',
  summary: "bring the database's amends schema up to this build",
  help: `migrate [--json]

  Applies the schema migrations this amends has and the database lacks, in one transaction
  (all or none), under the same lock as every process's own migration. Run it before an
  upgraded worker, relay or view starts, as the role that owns amends' tables; then the
  processes may run with --no-migrate as a role that only reads and writes rows
  (docs/operations.md "Database roles and schema"). Refuses a schema newer than this build, or one
  another build wrote. Prints what it applied. Needs AMENDS_DATABASE_URL; the tables live in
  the schema AMENDS_DATABASE_SCHEMA names (default amends), which it creates when missing.

  Flags
    --json    print {"database", "schema", "applied": [{version, name}], "version"} instead of a line

  Example
    $ amendsctl migrate`,
  flags: {
    json: { type: 'boolean', default: false },
  },
  async run(cli, io) {
    refuseArguments(cli.input);
    const databaseUrl = databaseUrlFrom(io.env);
    const database = databaseTarget(databaseUrl);
    // Where the tables are (database-schema.ts).
    const schema = databaseSchema(databaseUrl);
    const applied = await Database.migrate(databaseUrl, `amendsctl migrate pid ${process.pid}`);
    const version = knownSchemaVersion();
    const named = applied.map((v) => ({ version: v, name: migrations[v - 1]?.name ?? '' }));
    if (cli.flags.json) {
      io.stdout.write(`${JSON.stringify({ database, schema, applied: named, version })}\n`);
    } else if (named.length === 0) {
      io.stdout.write(
        `amendsctl migrate: ${database} (schema ${schema}) is current (schema version ${version}); nothing applied\n`,
      );
    } else {
      const list = named.map((m) => `${m.version} (${m.name})`).join(', ');
      io.stdout.write(
        `amendsctl migrate: applied ${list} to ${database} (schema ${schema}); schema version ${version}\n`,
      );
    }
    return 0;
  },
});
