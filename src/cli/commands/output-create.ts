/**
 * `amendsctl output-create --manifest M --topic OUT [--replication-factor 1] [--brokers B]`
 * (transport.md, Output binding): creates the namespace's output topic and records the
 * binding namespace → (topic, incarnation) in PostgreSQL.
 *
 * Order: register the namespace (worker.md §1); refuse when it is bound already (before the
 * broker is touched); refuse an existing topic (never adopts); create it with the source's
 * partition count and the source's retention safety settings; read its UUID back; read the
 * retention back; record the binding. A failed or unknown creation response proves nothing
 * about the topic: the diagnostic names it.
 */
import { invalidInput, operationalError, usageError } from '../../domain/amends-error.js';
import { validTopicName } from '../../domain/config.js';
import { type KafkaAdmin, type TopicDescription, withKafkaAdmin } from '../../io/kafka-admin.js';
import { resolveBrokers } from '../../io/kafka-connection.js';
import { registerNamespace } from '../../io/namespace-registry.js';
import { readBinding, recordBinding } from '../../io/output-binding.js';
import { Database, databaseUrlFrom, describeDatabaseError } from '../../io/postgres.js';
import { describeTopicConfig, retentionConfigNames } from '../../io/topic-config.js';
import { defineCommand } from '../command.js';
import { exitCodes } from '../exit.js';
import { readManifestFile } from '../input-files.js';
import { sourceTopicConfig } from './source-create.js';

const replicationFactorMax = 32;
/** After an acknowledged creation, how long the topic may take to appear in metadata. */
const topicVisibleBudgetMs = 10_000;
const topicVisiblePollMs = 200;

function inspectAdvice(topic: string, brokers: string): string {
  return `a failed response does not prove the topic was not created: inspect topic ${topic} on ${brokers} (e.g. kafka-topics.sh --describe --topic ${topic}) before retrying, and delete it or choose another name`;
}

export const outputCreateCommand = defineCommand({
  name: 'output-create',
  summary: "create a namespace's output topic and record the binding",
  help: `output-create --manifest M --topic OUT [--replication-factor 1]

  Creates the output topic OUT with the source's partition count and the same retention
  safety settings (cleanup.policy=delete, retention.ms=-1, retention.bytes=-1), reads back
  its UUID and records the binding namespace -> (OUT, incarnation) in PostgreSQL, where
  \`amends relay\` and \`amends view\` read it. Refuses an existing topic and a namespace
  that is bound already. Prints the binding as JSON. Needs AMENDS_DATABASE_URL.

  Flags
    --manifest M              the namespace's manifest (required)
    --topic OUT               output topic to create (required)
    --replication-factor N    replication factor (default 1, the local single-node stack)
    --brokers LIST            bootstrap servers (default: $AMENDS_BROKERS or 127.0.0.1:19092)

  Example
    $ amendsctl output-create --manifest demo-1.manifest.json --topic amends-demo-1-out`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    topic: { type: 'string', isRequired: true },
    replicationFactor: { type: 'number', default: 1 },
    brokers: { type: 'string' },
  },
  async run(cli, io) {
    const topic = cli.flags.topic as string;
    const { replicationFactor } = cli.flags;
    if (cli.input.length > 0) throw usageError(`unexpected argument ${JSON.stringify(cli.input[0])}`);
    if (!validTopicName(topic)) {
      throw usageError(`--topic ${JSON.stringify(topic)} is not a legal Kafka topic name (1-249 of [a-zA-Z0-9._-])`);
    }
    if (!Number.isSafeInteger(replicationFactor) || replicationFactor < 1 || replicationFactor > replicationFactorMax) {
      throw usageError(`--replication-factor must be an integer in [1, ${replicationFactorMax}]`);
    }
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = resolveBrokers(cli.flags.brokers, io.env);
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
        createOutputTopic(admin, topic, partitions, replicationFactor),
      );
      await checkRetention(brokers, topic);
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

async function createOutputTopic(
  admin: KafkaAdmin,
  topic: string,
  partitions: number,
  replicationFactor: number,
): Promise<TopicDescription> {
  const existing = await admin.describeTopic(topic);
  if (existing) {
    throw invalidInput(
      `topic ${topic} already exists (${existing.incarnation}, ${existing.partitions} partitions): output-create never adopts a topic; choose a new topic name`,
    );
  }
  const creation = await admin.createTopic({ topic, partitions, replicationFactor, config: { ...sourceTopicConfig } });
  switch (creation.outcome) {
    case 'created':
      break;
    case 'already-exists':
      throw invalidInput(
        `topic ${topic} was created by someone else while output-create ran (${creation.detail}): output-create never adopts a topic; choose a new topic name`,
      );
    case 'failed':
      throw operationalError(
        `creating topic ${topic} failed (${creation.detail}); ${inspectAdvice(topic, admin.brokers)}`,
      );
    case 'unknown':
      throw operationalError(
        `the outcome of creating topic ${topic} is unknown (${creation.detail}); ${inspectAdvice(topic, admin.brokers)}`,
      );
  }
  // Metadata may lag the controller's acknowledgement for a moment.
  const deadline = Date.now() + topicVisibleBudgetMs;
  for (;;) {
    const created = await admin.describeTopic(topic);
    if (created) {
      if (created.partitions !== partitions) {
        throw operationalError(
          `topic ${topic} was created with ${created.partitions} partitions instead of ${partitions}; nothing was bound: inspect or delete it`,
        );
      }
      return created;
    }
    if (Date.now() >= deadline) {
      throw operationalError(
        `topic ${topic} was acknowledged as created but is not visible in metadata after ${topicVisibleBudgetMs} ms; nothing was bound: inspect topic ${topic} on ${admin.brokers}`,
      );
    }
    await new Promise((r) => setTimeout(r, topicVisiblePollMs));
  }
}

async function checkRetention(brokers: string, topic: string): Promise<void> {
  const effective = await describeTopicConfig(brokers, topic, retentionConfigNames);
  const wrong = retentionConfigNames.filter((name) => effective[name] !== sourceTopicConfig[name]);
  if (wrong.length > 0) {
    const got = wrong.map((name) => `${name}=${effective[name] ?? '(absent)'}`).join(', ');
    throw operationalError(
      `topic ${topic} was created but the broker reports ${got}, not unlimited delete-only retention; nothing was bound: fix or delete topic ${topic}`,
    );
  }
}
