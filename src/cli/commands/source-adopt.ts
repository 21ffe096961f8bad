/**
 * `amendsctl source-adopt --namespace NS --topic T [--config FILE] [--brokers B]`
 * (docs/operations.md, "Adopting an existing topic"): adopts a source topic that amends did
 * not create — a ledger its owners' producers already write — and prints the manifest of a
 * new namespace over it, exactly as source-create would have printed it.
 *
 * Order: flags and the config file's JSON are read before the broker is touched; with
 * AMENDS_DATABASE_URL set a registered namespace is refused (unregistered-namespace.ts, as
 * source-create); the topic is surveyed with the worker's own rules (source-rules.ts:
 * no compaction, unlimited retention, every log start at 0) and its partition count becomes
 * the configuration's, which the config file must fit. Anything unsafe is one refusal that
 * lists every problem and its fix. It only reads: amends never changes a topic it did not
 * create (docs/choices.md), so fixing a setting is the operator's decision and command.
 */

import type { ConfigFile } from '../../domain/config.js';
import { manifestText } from '../../domain/manifest-text.js';
import { surveyTopicForAdoption } from '../../io/kafka/topic-adoption.js';
import { refuseRegisteredNamespace, skippedCheckNote } from '../../io/store/unregistered-namespace.js';
import { AmendsError, invalidInput } from '../../kernel/amends-error.js';
import { adoptionRefusal } from '../adoption-refusal.js';
import { defineCommand } from '../command.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
import { namespaceFlag } from '../namespace-flag.js';
import { configFileFor, configFlagHelp, readConfigFlag, sourceManifest, sourceTopicFlag } from '../source-manifest.js';

export const sourceAdoptCommand = defineCommand({
  name: 'source-adopt',
  summary: 'check an existing topic is safe to decide and print its manifest',
  help: `source-adopt --namespace NS --topic T [--config FILE]

  Adopts the existing topic T as the source of a new namespace NS, for a ledger your own
  producers already write, and prints the manifest {"source_topic": T, "config": {…}} as
  JSON on stdout, exactly as source-create prints it (source_incarnation is T's UUID).
  First it checks T as every worker will check it before and after each poll:
    cleanup.policy    must not contain compact (compaction removes records)
    retention.ms      must be -1 (records must never expire)
    retention.bytes   must be -1
    log start offset  must be 0 on every partition (the whole history is there)
  T's partition count becomes the configuration's partitions, and every stock key of
  --config must lie on one of them. Anything unsafe is refused (exit 1) in one line that
  lists every problem with the kafka-configs.sh (and rpk) command that fixes it; history
  that is already gone has no fix. amends never changes T itself. What no check can see:
  whether compaction or a finite retention was on in the past, or records were deleted and
  produced again (docs/operations.md, Adopting an existing topic). A topic that does not
  exist is refused: source-create creates a new one. Needs no database; when
  AMENDS_DATABASE_URL is set, it first refuses (exit 1) a namespace that is registered
  there already, and without it says on stderr that this check was skipped.

  Flags
    --namespace NS            namespace name, [a-z0-9][a-z0-9-]{0,62} (required)
    --topic T                 the existing source topic to adopt (required)
${configFlagHelp}
${kafkaFlagsHelp(26)}

  Example
    $ amendsctl source-adopt --namespace stock-1 --topic ledger --config stock.config.json > stock-1.manifest.json`,
  flags: {
    namespace: { type: 'string', isRequired: true },
    topic: { type: 'string', isRequired: true },
    config: { type: 'string' },
    ...kafkaFlags,
  },
  async run(cli, io) {
    const namespace = namespaceFlag(cli.flags.namespace);
    refuseArguments(cli.input);
    const topic = sourceTopicFlag(cli.flags.topic as string);
    const configPath = cli.flags.config;
    const rawConfig = await readConfigFlag(configPath);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    // Before the broker: a registered name would give a manifest every later command refuses.
    const check = await refuseRegisteredNamespace(io.env, namespace, 'source-adopt');

    const survey = await surveyTopicForAdoption(brokers, topic, `amendsctl-source-adopt-${process.pid}`);
    if (survey === undefined) {
      throw invalidInput(
        `topic ${topic} does not exist on ${brokers}: source-adopt adopts an existing topic; amendsctl source-create --namespace ${namespace} --topic ${topic} creates a new one`,
      );
    }
    const { partitions, incarnation } = survey.description;
    const config = fitConfig(rawConfig, configPath, partitions);
    if (survey.problems.length > 0 || config.problem !== undefined) {
      throw adoptionRefusal({ namespace, topic, brokers }, survey.problems, config.problem);
    }
    const manifest = sourceManifest({ namespace, topic, partitions, configFile: config.file, incarnation });
    io.stdout.write(manifestText(manifest));
    // Last, so a refusal above stays one line.
    if (check === 'skipped') io.stderr.write(skippedCheckNote('source-adopt', namespace));
    return exitCodes.ok;
  },
});

type FittedConfig = { file: ConfigFile; problem?: undefined } | { file?: undefined; problem: string };

/**
 * The config file checked against the topic's partition count. Its diagnostic joins the
 * topic's problems in the one refusal rather than hiding them until it is fixed.
 */
function fitConfig(raw: unknown, path: string | undefined, partitions: number): FittedConfig {
  try {
    return { file: configFileFor(raw, path, partitions) };
  } catch (error) {
    if (error instanceof AmendsError && error.code === 'invalid_input') {
      return { problem: `${error.message} (topic has ${partitions} partitions)` };
    }
    throw error;
  }
}
