/**
 * `amendsctl output-create --manifest M --topic OUT [--replication-factor 1]
 * [--min-insync-replicas N] [--brokers B]`
 * (docs/design.md#output-binding): creates the namespace's output topic and records the
 * binding namespace → (topic, incarnation) in PostgreSQL.
 *
 * Order: register the namespace (docs/design.md#manifest); refuse when it is bound already (before the
 * broker is touched); refuse an existing topic (never adopts); create it with the source's
 * partition count, the source's retention safety settings and its in-sync floor
 * (replication-flags.ts); read its UUID back; read those settings back; record the binding. A failed or unknown creation response proves nothing
 * about the topic: the diagnostic names it.
 */

import { validTopicName } from '../../domain/config.js';
import { withKafkaAdmin } from '../../io/kafka/kafka-admin.js';
import { checkSafeRetention, createSafeTopic } from '../../io/kafka/safe-topic.js';
import { registerNamespace } from '../../io/store/namespace-registry.js';
import { Database, databaseUrlFrom, describeDatabaseError } from '../../io/store/postgres.js';
import { readBinding, recordBinding } from '../../io/transport/output-binding.js';
import { invalidInput, usageError } from '../../kernel/amends-error.js';
import { defineCommand } from '../command.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { readManifestFile } from '../input-files.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
import { replicationFlags, topicReplicationFrom } from '../replication-flags.js';

export const outputCreateCommand = defineCommand({
  name: 'output-create',
  summary: "create a namespace's output topic and record the binding",
  help: `output-create --manifest M --topic OUT [--replication-factor ${replicationFlags.replicationFactor.default}] [--min-insync-replicas N]

  Creates the output topic OUT with the source's partition count and the same retention
  safety settings (cleanup.policy=delete, retention.ms=-1, retention.bytes=-1) and, with a
  replication factor of 2 or more, min.insync.replicas (2 with RF 3: the relay's acks=all
  writes are on two brokers before they count as published), reads back its UUID and
  those settings, and records the binding namespace -> (OUT, incarnation) in PostgreSQL,
  where \`amends relay\` and \`amends view\` read it. Refuses an existing topic and a namespace
  that is bound already. Prints the binding as JSON. Needs AMENDS_DATABASE_URL.

  Flags
    --manifest M              the namespace's manifest (required)
    --topic OUT               output topic to create (required)
    --replication-factor N    replication factor (default ${replicationFlags.replicationFactor.default}, the local single-node stack;
                              3 on the 3-broker cluster, npm run up -- --brokers 3)
    --min-insync-replicas N   the topic's min.insync.replicas, 1..RF (default min(2, RF-1),
                              at least 1: 2 with RF 3); with RF 1 and no flag the broker's default
${kafkaFlagsHelp(26)}

  Example
    $ amendsctl output-create --manifest demo-1.manifest.json --topic amends-demo-1-out`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    topic: { type: 'string', isRequired: true },
    ...replicationFlags,
    ...kafkaFlags,
  },
  async run(cli, io) {
    const topic = cli.flags.topic as string;
    refuseArguments(cli.input);
    if (!validTopicName(topic)) {
      throw usageError(`--topic ${JSON.stringify(topic)} is not a legal Kafka topic name (1-249 of [a-zA-Z0-9._-])`);
    }
    const { replicationFactor, minInsyncReplicas } = topicReplicationFrom(cli.flags);
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    const manifest = await readManifestFile(cli.flags.manifest as string);
    const { namespace, partitions } = manifest.config;
    if (topic === manifest.source_topic) {
      throw usageError(`--topic ${topic} is the namespace's source topic: choose a new output topic name`);
    }
    const db = await Database.open(databaseUrl, `amendsctl output-create pid ${process.pid}`);
    try {
      const existing = await (async () => {
        await registerNamespace(db.pool, manifest);
        return readBinding(db.pool, namespace);
      })().catch((error: unknown) => {
        throw describeDatabaseError(error, databaseUrl, `reading the output binding of namespace ${namespace}`);
      });
      if (existing) {
        throw invalidInput(
          `namespace ${namespace} is already bound to output topic ${existing.outputTopic} (${existing.incarnation}, since ${existing.createdAt.toISOString()}): a namespace has one output topic; nothing was created`,
        );
      }
      const description = await withKafkaAdmin(brokers, `amendsctl-output-create-${process.pid}`, (admin) =>
        createSafeTopic(admin, {
          topic,
          partitions,
          replicationFactor,
          minInsyncReplicas,
          command: 'output-create',
          consequence: 'nothing was bound: ',
          existingAdvice: '',
        }),
      );
      await checkSafeRetention(brokers, topic, minInsyncReplicas, 'nothing was bound: ');
      const recorded = await recordBinding(db.pool, {
        namespace,
        outputTopic: topic,
        incarnation: description.incarnation,
        partitions,
      }).catch((error: unknown) => {
        throw describeDatabaseError(
          error,
          databaseUrl,
          `recording the binding of namespace ${namespace} to the new topic ${topic} (${description.incarnation}); the topic exists now`,
        );
      });
      if (!recorded.inserted) {
        const winner = await readBinding(db.pool, namespace);
        throw invalidInput(
          `namespace ${namespace} was bound to ${winner?.outputTopic ?? 'another topic'} by someone else while output-create ran; topic ${topic} (${description.incarnation}) was created but is not bound: delete it`,
        );
      }
      io.stdout.write(
        `${JSON.stringify({ namespace, output_topic: topic, incarnation: description.incarnation, partitions })}\n`,
      );
      return exitCodes.ok;
    } finally {
      await db.close();
    }
  },
});
