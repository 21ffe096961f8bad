/**
 * `amendsctl rebuild-create --manifest M --namespace NS2 [--brokers B]`
 * (docs/design.md#rebuild-namespaces): prints the manifest of a new namespace over the same source topic:
 * same incarnation and configuration (its newest revision), only the namespace differs. Its consumer group
 * (`amends.NS2.source`), frontiers (0: nothing in the database yet), epochs and outputs all
 * follow from the new name, so workers on it re-derive everything from offset 0.
 *
 * Order: flags and manifest are validated first; then, only when AMENDS_DATABASE_URL is set,
 * NS2 must not be registered there (docs/choices.md: it needs no database otherwise); then
 * the live topic must still be the manifest's incarnation with its partition count; then
 * the manifest is printed in source-create's layout. It creates and writes nothing.
 */

import { manifestText } from '../../domain/manifest-text.js';
import { rebuildManifest } from '../../domain/rebuild-manifest.js';
import { checkLiveSourceTopic } from '../../io/kafka/live-source-topic.js';
import { refuseRegisteredNamespace, skippedCheckNote } from '../../io/store/unregistered-namespace.js';
import { defineCommand } from '../command.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { readManifestFile } from '../input-files.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
import { namespaceFlag } from '../namespace-flag.js';

export const rebuildCreateCommand = defineCommand({
  name: 'rebuild-create',
  summary: 'print the manifest of a rebuild namespace over the same source topic',
  help: `rebuild-create --manifest M --namespace NS2

  Prints (stdout, source-create's layout) the manifest of a new namespace NS2 over M's
  source topic: the same incarnation and configuration (when M carries revisions, the
  newest one, from offset 0), only the namespace differs. NS2
  gets its own consumer group (amends.NS2.source) and starts at offset 0, so workers on it
  re-derive every decision and output. Refuses (exit 1) when the live topic is missing or
  its UUID is not M's incarnation (the topic was recreated), and NS2 equal to M's
  namespace (exit 2). Needs no database; when AMENDS_DATABASE_URL is set, it also refuses
  an NS2 that is registered there already.

  Flags
    --manifest M       the manifest of the namespace to rebuild (required)
    --namespace NS2    the new namespace, [a-z0-9][a-z0-9-]{0,62} (required)
${kafkaFlagsHelp(19)}

  Example
    $ amendsctl rebuild-create --manifest demo-1.manifest.json --namespace demo-1-rebuild > demo-1-rebuild.manifest.json`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    namespace: { type: 'string', isRequired: true },
    ...kafkaFlags,
  },
  async run(cli, io) {
    const namespace = namespaceFlag(cli.flags.namespace);
    refuseArguments(cli.input);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    const original = await readManifestFile(cli.flags.manifest as string);
    const rebuild = rebuildManifest(original, namespace);
    // A registered NS2 has state of its own: a manifest for it would not start at offset 0.
    const check = await refuseRegisteredNamespace(io.env, namespace, 'rebuild-create');
    await checkLiveSourceTopic(brokers, `amendsctl-rebuild-create-${process.pid}`, {
      topic: original.source_topic,
      incarnation: original.config.source_incarnation,
      partitions: original.config.partitions,
      expectedBy: `the manifest of namespace ${original.config.namespace}`,
      consequence: 'no rebuild manifest printed',
    });
    io.stdout.write(manifestText(rebuild));
    // Last, so a refusal above stays one line.
    if (check === 'skipped') io.stderr.write(skippedCheckNote('rebuild-create', namespace));
    return exitCodes.ok;
  },
});
