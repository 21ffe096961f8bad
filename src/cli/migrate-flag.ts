/**
 * `--no-migrate` (issue 35): a process that writes rows (worker, relay, view, source-load) may
 * run as a role that can create nothing, after `amendsctl migrate` ran as the role that owns
 * the schema. Without the flag it migrates on first use, as it always has.
 */
export const migrateFlag = { migrate: { type: 'boolean', default: true } } as const;

/** `--no-migrate`'s help, in every such command's flags. */
export const noMigrateHelp = 'refuse a schema older than this amends instead of migrating it (amendsctl migrate)';
