/**
 * `amendsctl manifest-recover --namespace NS [--brokers B]` (docs/design.md#manifest): rebuilds a lost
 * manifest from the namespace registry in PostgreSQL and prints it byte for byte as
 * source-create printed it (manifest-text.ts), so `diff` with a surviving copy is empty.
 *
 * Order: AMENDS_DATABASE_URL must be set; the registry row must exist and check out (a valid
 * configuration of NS whose digest is the stored digest: recovered-manifest.ts); the live
 * topic must still be the stored incarnation with its partition count (a recreated topic
 * holds another history: a manifest for it would be a lie). Only then is it printed.
 */

import type { Manifest } from '../../domain/config.js';
import { manifestText } from '../../domain/manifest-text.js';
import { manifestFromStored } from '../../domain/recovered-manifest.js';
import { checkLiveSourceTopic } from '../../io/kafka/live-source-topic.js';
import { readNamespace } from '../../io/store/namespace-registry.js';
import { Database, databaseTarget, databaseUrlFrom, describeDatabaseError } from '../../io/store/postgres.js';
import { readRevisions } from '../../io/store/revision-registry.js';
import { AmendsError, invalidInput } from '../../kernel/amends-error.js';
import { defineCommand } from '../command.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
import { namespaceFlag } from '../namespace-flag.js';

export const manifestRecoverCommand = defineCommand({
  name: 'manifest-recover',
  summary: "print a lost manifest again from the database's namespace registry",
  help: `manifest-recover --namespace NS

  Reads namespace NS from the registry in PostgreSQL, checks that its stored configuration
  has the stored digest and that the live source topic's UUID is still the stored
  incarnation, and prints the manifest (stdout) byte for byte as source-create printed
  it. Refuses (exit 1) an unknown namespace and a recreated or missing topic, naming
  the topic and both incarnations. Needs AMENDS_DATABASE_URL.

  Flags
    --namespace NS    the namespace whose manifest was lost (required)
${kafkaFlagsHelp(18)}

  Example
    $ amendsctl manifest-recover --namespace demo-1 > demo-1.manifest.json`,
  flags: {
    namespace: { type: 'string', isRequired: true },
    ...kafkaFlags,
  },
  async run(cli, io) {
    const namespace = namespaceFlag(cli.flags.namespace);
    refuseArguments(cli.input);
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    const manifest = await readRegistered(databaseUrl, namespace);
    if (!manifest) {
      throw invalidInput(
        `namespace ${namespace} is not registered in the database at ${databaseTarget(databaseUrl)}: nothing to recover (a namespace is registered by the first worker, source-load, output-create, inspect or export that uses it)`,
      );
    }
    await checkLiveSourceTopic(brokers, `amendsctl-manifest-recover-${process.pid}`, {
      topic: manifest.source_topic,
      incarnation: manifest.config.source_incarnation,
      partitions: manifest.config.partitions,
      expectedBy: `namespace ${namespace} in the database`,
      consequence: 'no manifest printed',
    });
    io.stdout.write(manifestText(manifest));
    return exitCodes.ok;
  },
});

/** The manifest the registry row gives, with the configuration revisions after the first (checked as a chain). */
async function readRegistered(databaseUrl: string, namespace: string): Promise<Manifest | undefined> {
  // It only reads: no migration, read-only sessions (as inspect, export and tui).
  const db = await Database.openReadOnly(databaseUrl, `amendsctl manifest-recover pid ${process.pid}`);
  try {
    const row = await readNamespace(db.pool, namespace).catch((error: unknown) => {
      throw describeDatabaseError(error, databaseUrl, `reading namespace ${namespace}`);
    });
    if (row === undefined) return undefined;
    const manifest = manifestFromStored(row);
    const revisions = await readRevisions(db.pool, manifest.config).catch((error: unknown) => {
      if (error instanceof AmendsError) throw error;
      throw describeDatabaseError(error, databaseUrl, `reading the configuration revisions of namespace ${namespace}`);
    });
    return revisions.length === 0 ? manifest : { ...manifest, revisions };
  } finally {
    await db.close();
  }
}
