/**
 * `amendsctl namespace-drop --namespace NS [--topics] [--yes]` (docs/operations.md, "Removing a
 * namespace"): every row of NS in every amends table, in one transaction (namespace-drop.ts in
 * the store), and with --topics its source and output topics. Without --yes it shows what it
 * would drop and exits 1: a command that deletes a ledger's history is never one keystroke.
 *
 * Order: the database first, so a refusal there (a live process, a rebuild sharing the source)
 * leaves the topics alone; then each topic, only while its UUID is still the one the namespace
 * recorded (a topic recreated under the same name is someone else's history).
 */

import { KafkaAdmin } from '../../io/kafka/kafka-admin.js';
import { dropNamespaceRows, type NamespaceRows } from '../../io/store/namespace-drop.js';
import { withPooledClient } from '../../io/store/pooled-client.js';
import { Database, databaseTarget, databaseUrlFrom, describeDatabaseError } from '../../io/store/postgres.js';
import { invalidInput, operationalError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { type CommandIo, defineCommand } from '../command.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
import { namespaceFlag } from '../namespace-flag.js';

export const namespaceDropCommand = defineCommand({
  name: 'namespace-drop',
  summary: 'remove a namespace: its rows in every table, and with --topics its topics',
  help: `namespace-drop --namespace NS [--topics] [--yes]

  Removes namespace NS from the database: every row of it in every amends table
  (decisions, authority, output versions and days, the view's rows and positions, the
  relay's positions, the output binding, configuration revisions, partitions, heartbeats
  and the registration itself), in one transaction: all of it or nothing. With --topics it
  then deletes the source topic and the output topic (when bound) from the broker, each
  only if its UUID is still the one the namespace recorded.

  Without --yes nothing is dropped: it lists what would be (rows per table, topics) and
  exits 1 saying to add --yes. It refuses (exit 1, nothing dropped) while a worker, relay
  or view of NS is alive (a heartbeat of the last 15 s that is not its final one), naming
  each; and with --topics while another namespace (a rebuild) reads the same source topic.
  A source topic you adopted (source-adopt) is your producers' topic: leave --topics out.
  The name can then be used again (source-create). Needs AMENDS_DATABASE_URL.

  Flags
    --namespace NS   the namespace to remove (required)
    --topics         delete its source and output topics too
    --yes            drop; without it, only show what would be dropped
${kafkaFlagsHelp(17)}

  Example
    $ amendsctl namespace-drop --namespace demo-1 --topics
    $ amendsctl namespace-drop --namespace demo-1 --topics --yes`,
  flags: {
    namespace: { type: 'string', isRequired: true },
    topics: { type: 'boolean', default: false },
    yes: { type: 'boolean', default: false },
    ...kafkaFlags,
  },
  async run(cli, io) {
    const namespace = namespaceFlag(cli.flags.namespace);
    refuseArguments(cli.input);
    const { topics, yes } = cli.flags;
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = topics ? kafkaEndpointFrom(cli.flags, io.env) : undefined;
    const db = await Database.open(databaseUrl, `amendsctl namespace-drop pid ${process.pid}`);
    let dropped: NamespaceRows | undefined;
    try {
      dropped = await withPooledClient(
        db.pool,
        (client) => dropNamespaceRows(client, namespace, { drop: yes, withSourceTopic: topics }),
        (error) => describeDatabaseError(error, databaseUrl, 'connecting'),
      ).catch((error: unknown) => {
        throw describeDatabaseError(error, databaseUrl, `dropping namespace ${namespace}`);
      });
    } finally {
      await db.close();
    }
    if (dropped === undefined) {
      throw invalidInput(`namespace ${namespace} is not registered in ${databaseTarget(databaseUrl)}: nothing to drop`);
    }
    if (!yes) {
      io.stdout.write(plan(dropped, topics));
      throw operationalError(`nothing was dropped: add --yes to drop namespace ${namespace}`);
    }
    io.stdout.write(`namespace ${namespace} dropped: ${rowList(dropped)}\n`);
    if (brokers !== undefined) await deleteTopics(dropped, brokers, io);
    return exitCodes.ok;
  },
});

function rowList(found: NamespaceRows): string {
  const total = found.rows.reduce((sum, r) => sum + r.rows, 0);
  return `${total} rows (${found.rows.map((r) => `${r.table} ${r.rows}`).join(', ')})`;
}

/** The topics of the namespace: the source, then the output when bound. */
function topicsOf(found: NamespaceRows): { topic: string; incarnation: string }[] {
  return [{ topic: found.sourceTopic, incarnation: found.sourceIncarnation }, ...(found.output ? [found.output] : [])];
}

function plan(found: NamespaceRows, withTopics: boolean): string {
  const topics = topicsOf(found).map((t) => `${t.topic} (${t.incarnation})`);
  const topicLine = withTopics
    ? `topics that would be deleted: ${topics.join(', ')}`
    : `topics left as they are (add --topics to delete them too): ${topics.join(', ')}`;
  return `namespace ${found.namespace} would be dropped: ${rowList(found)}\n${topicLine}\n`;
}

/** Each topic, while it is still the namespace's own; one line per topic on stdout. */
async function deleteTopics(found: NamespaceRows, brokers: string, io: CommandIo): Promise<void> {
  const failures: string[] = [];
  const admin = KafkaAdmin.open(brokers, `amendsctl-namespace-drop-${process.pid}`);
  try {
    for (const { topic, incarnation } of topicsOf(found)) {
      try {
        const live = await admin.describeTopic(topic);
        if (live === undefined) {
          io.stdout.write(`topic ${topic} was already gone\n`);
        } else if (live.incarnation !== incarnation) {
          io.stdout.write(
            `topic ${topic} left alone: it is ${live.incarnation} now, not the namespace's ${incarnation}\n`,
          );
        } else {
          const outcome = await admin.deleteTopic(topic);
          io.stdout.write(
            outcome === 'deleted' ? `topic ${topic} deleted (${incarnation})\n` : `topic ${topic} was already gone\n`,
          );
        }
      } catch (error) {
        failures.push(`${topic}: ${errorMessage(error)}`);
      }
    }
  } finally {
    admin.close();
  }
  if (failures.length > 0) {
    throw operationalError(
      `namespace ${found.namespace} was dropped, but deleting its topics failed (${failures.join('; ')}): delete them with kafka-topics.sh --delete --topic NAME once the broker answers`,
    );
  }
}
