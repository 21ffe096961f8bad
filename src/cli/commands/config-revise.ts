/**
 * `amendsctl config-revise --manifest M --config F` (docs/design.md#configuration-revisions):
 * appends a configuration revision to a namespace, in force from each partition's frontier,
 * and prints the manifest with its revisions (save it: every command accepts it, and
 * manifest-recover prints it again).
 *
 * Order: the files are read and the config file validated first; then the namespace is
 * registered with this manifest, or must be (digest, topic and any revisions it names); then one
 * transaction fixes the positions, pins or refuses decided keys and appends the revision
 * (io/store/revise-config.ts). A refusal writes nothing.
 */

import { parseConfigFile } from '../../domain/config.js';
import { manifestText } from '../../domain/manifest-text.js';
import { registerNamespace } from '../../io/store/namespace-registry.js';
import { Database, databaseUrlFrom, describeDatabaseError } from '../../io/store/postgres.js';
import { reviseConfig } from '../../io/store/revise-config.js';
import { AmendsError } from '../../kernel/amends-error.js';
import { defineCommand } from '../command.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { readJsonFile, readManifestFile } from '../input-files.js';

export const configReviseCommand = defineCommand({
  name: 'config-revise',
  summary: "change a namespace's stock keys or default rule from now on, without a rebuild",
  help: `config-revise --manifest M --config F

  Appends a revision to the configuration of M's namespace: F is a whole config file, as
  source-create's --config takes it, that adds stock-key overrides, changes them for keys
  with no decisions yet, or adds or changes the default rule. It is in force from each
  partition's frontier at this moment (every record not yet decided) on; nothing already
  decided changes. Running workers take it up without a restart: their next commit is
  refused (the commit checks the revision as it checks the epoch), they read the new
  revision and decide the batch again.

  A key that already has decisions keeps its terms for ever: a revision that lists it with
  another opening, threshold or partition is refused, naming it; one that changes or drops
  the default rule lists each such key with its terms unchanged ("pinned", said on stderr).
  The namespace, partitions, ledger origin and partitioner never change.

  Prints the manifest with its revisions on stdout (save it in place of M). Needs
  AMENDS_DATABASE_URL.

  Flags
    --manifest M    the namespace's manifest (required)
    --config F      the whole configuration from now on (required)

  Example
    $ amendsctl config-revise --manifest ours.manifest.json --config ours.v2.json > ours.new.json
    $ mv ours.new.json ours.manifest.json`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    config: { type: 'string', isRequired: true },
  },
  async run(cli, io) {
    refuseArguments(cli.input);
    const manifest = await readManifestFile(cli.flags.manifest as string);
    const path = cli.flags.config as string;
    const what = `config file ${path}`;
    const file = parseConfigFile(await readJsonFile(path, 'config file'), manifest.config.partitions, what);
    const databaseUrl = databaseUrlFrom(io.env);
    const { namespace } = manifest.config;
    const db = await Database.open(databaseUrl, `amendsctl config-revise pid ${process.pid}`);
    try {
      const made = await (async () => {
        // Registered first if nothing has used it yet (as every command that writes does).
        await registerNamespace(db.pool, manifest);
        return reviseConfig(db, manifest, file, what);
      })().catch((error: unknown) => {
        if (error instanceof AmendsError) throw error;
        throw describeDatabaseError(error, databaseUrl, `revising the configuration of namespace ${namespace}`);
      });
      const revision = made.revisions[made.revisions.length - 1];
      io.stdout.write(manifestText({ ...manifest, revisions: made.revisions }));
      const from = revision?.from.map((o, p) => `${p}:${o}`).join(' ');
      const pins = made.pinned.length === 0 ? '' : `; ${made.pinned.length} decided keys pinned to their terms`;
      io.stderr.write(
        `config-revise: revision ${revision?.revision} of namespace ${namespace} in force from ${from}${pins}\n`,
      );
      return exitCodes.ok;
    } finally {
      await db.close();
    }
  },
});
