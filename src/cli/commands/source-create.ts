/**
 * `amendsctl source-create --namespace NS --topic T [--partitions 2] [--replication-factor 1]
 * [--min-insync-replicas N] [--config FILE] [--brokers B]` (docs/design.md#manifest, #commands): creates
 * the source topic and prints the manifest. It needs no database; with AMENDS_DATABASE_URL
 * set it refuses a namespace registered there before creating anything
 * (unregistered-namespace.ts).
 *
 * Order: every flag and the configuration are validated before the broker is touched; an
 * existing topic is refused (never adopted here: source-adopt checks and adopts one); the topic is created with unlimited
 * retention and its in-sync floor (replication-flags.ts); its UUID is read back as the
 * incarnation; the effective retention settings (and the floor) are read back too
 * (topic-config.ts) so a broker that ignored one is caught here, not by the first worker.
 *
 * Output: the manifest as pretty-printed JSON (2-space indent, members in docs/design.md#configuration
 * order, manifest-text.ts) on stdout: a file a person saves and reads; rebuild-create and
 * manifest-recover print the same layout. Its digest does not depend on this layout: it is
 * computed over the canonical JSON of `config` (docs/design.md#configuration).
 */

import { defaultPartitions } from '../../domain/config.js';
import { manifestText } from '../../domain/manifest-text.js';
import { withKafkaAdmin } from '../../io/kafka/kafka-admin.js';
import { checkSafeRetention, createSafeTopic, safeTopicConfig } from '../../io/kafka/safe-topic.js';
import { refuseRegisteredNamespace, skippedCheckNote } from '../../io/store/unregistered-namespace.js';
import { usageError } from '../../kernel/amends-error.js';
import { defineCommand } from '../command.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
import { namespaceFlag } from '../namespace-flag.js';
import { replicationFlags, topicReplicationFrom } from '../replication-flags.js';
import { configFileFor, configFlagHelp, readConfigFlag, sourceManifest, sourceTopicFlag } from '../source-manifest.js';

/** The source topic's settings (re-exported for tests that make topics like source-create's). */
export const sourceTopicConfig = safeTopicConfig;

const partitionsMax = 10_000;

export const sourceCreateCommand = defineCommand({
  name: 'source-create',
  summary: 'create a source topic and print its manifest',
  help: `source-create --namespace NS --topic T [--partitions ${defaultPartitions}] [--replication-factor ${replicationFlags.replicationFactor.default}]
                [--min-insync-replicas N] [--config FILE]

  Creates the source topic T (cleanup.policy=delete, retention.ms=-1, retention.bytes=-1;
  with a replication factor of 2 or more also min.insync.replicas, 2 with RF 3, so a
  loaded record is on two brokers before source-load counts it), reads back its UUID as
  the source incarnation, and prints the manifest
  {"source_topic": T, "config": {…}} as JSON on stdout. Refuses a topic that already
  exists (amendsctl source-adopt adopts one, after checking it is safe). Needs no database; when AMENDS_DATABASE_URL is set, it first refuses (exit 1)
  a namespace that is registered there already, and without it says on stderr that
  this check was skipped.

  Flags
    --namespace NS            namespace name, [a-z0-9][a-z0-9-]{0,62} (required)
    --topic T                 source topic to create (required)
    --partitions N            partition count (default ${defaultPartitions})
    --replication-factor N    replication factor (default ${replicationFlags.replicationFactor.default}, the local single-node stack;
                              3 on the 3-broker cluster, npm run up -- --brokers 3)
    --min-insync-replicas N   the topic's min.insync.replicas, 1..RF (default min(2, RF-1),
                              at least 1: 2 with RF 3); with RF 1 and no flag the broker's default
${configFlagHelp}
${kafkaFlagsHelp(26)}

  Example
    $ amendsctl source-create --namespace demo-1 --topic amends-demo-1 > demo-1.manifest.json`,
  flags: {
    namespace: { type: 'string', isRequired: true },
    topic: { type: 'string', isRequired: true },
    partitions: { type: 'number', default: defaultPartitions },
    ...replicationFlags,
    config: { type: 'string' },
    ...kafkaFlags,
  },
  async run(cli, io) {
    const { partitions } = cli.flags;
    const namespace = namespaceFlag(cli.flags.namespace);
    refuseArguments(cli.input);
    const topic = sourceTopicFlag(cli.flags.topic as string);
    if (!Number.isSafeInteger(partitions) || partitions < 1 || partitions > partitionsMax) {
      throw usageError(`--partitions must be an integer in [1, ${partitionsMax}]`);
    }
    const { replicationFactor, minInsyncReplicas } = topicReplicationFrom(cli.flags);
    const configFile = configFileFor(await readConfigFlag(cli.flags.config), cli.flags.config, partitions);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    // Before anything is created: a registered name would give a manifest every later
    // command refuses (its config digest is not the registered one).
    const check = await refuseRegisteredNamespace(io.env, namespace, 'source-create');

    const description = await withKafkaAdmin(brokers, `amendsctl-source-create-${process.pid}`, (admin) =>
      createSafeTopic(admin, {
        topic,
        partitions,
        replicationFactor,
        minInsyncReplicas,
        command: 'source-create',
        consequence: '',
        existingAdvice: `, or adopt this one with its history: amendsctl source-adopt --namespace ${namespace} --topic ${topic}`,
      }),
    );
    await checkSafeRetention(brokers, topic, minInsyncReplicas, '');

    const manifest = sourceManifest({ namespace, topic, partitions, configFile, incarnation: description.incarnation });
    io.stdout.write(manifestText(manifest));
    // Last, so a refusal above stays one line.
    if (check === 'skipped') io.stderr.write(skippedCheckNote('source-create', namespace));
    return exitCodes.ok;
  },
});
