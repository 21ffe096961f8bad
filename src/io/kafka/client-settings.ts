/**
 * The Kafka client settings of a process (`--kafka-config FILE` or AMENDS_KAFKA_CONFIG,
 * docs/design.md#commands): a Java-properties file of librdkafka property names, as `kcat -F` and Kafka's
 * `--command-config` take, applied to every client amends opens (consumer, producer,
 * admin, and the kafkajs DescribeConfigs reader through kafkajs-security.ts).
 *
 * A value may be `${env:NAME}` or `${file:PATH}` (also inside a longer value), so secrets
 * stay out of the file. Values are never shown: diagnostics name the file, the line and
 * the property, nothing else, and nothing here is written to manifests, heartbeats or
 * reports. Unknown or invalid properties (librdkafka's own verdict), properties amends sets
 * itself, and unresolvable references are usage errors (exit 2).
 *
 * Why process-wide: a process talks to one cluster, so its security settings belong to the
 * process like its environment. The CLI installs them once, before any client exists, and
 * every client factory reads them here, instead of a second parameter next to each of the
 * many `brokers` strings that cross the code.
 */
import { readFileSync } from 'node:fs';
import { RdKafka } from '@confluentinc/kafka-javascript';
import { usageError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { parseProperties } from './properties-file.js';

export interface KafkaClientSettings {
  /** librdkafka name → resolved value; empty without a file. */
  readonly properties: Readonly<Record<string, string>>;
  /** The file they came from, for diagnostics; null without one. */
  readonly file: string | null;
}

export const noKafkaClientSettings: KafkaClientSettings = { properties: {}, file: null };

/**
 * Properties amends decides itself (docs/design.md#consumer, #transport): a file may not change how
 * offsets, groups, isolation or idempotence work, only how clients reach the cluster.
 */
const amendsOwnedProperties = new Set([
  'client.id',
  'group.id',
  'group.instance.id',
  'group.protocol',
  'partition.assignment.strategy',
  'session.timeout.ms',
  'max.poll.interval.ms',
  'enable.auto.commit',
  'enable.auto.offset.store',
  'auto.offset.reset',
  'isolation.level',
  'enable.partition.eof',
  'enable.idempotence',
  'transactional.id',
  'acks',
  'request.required.acks',
  'delivery.timeout.ms',
  'message.timeout.ms',
  'dr_cb',
  'dr_msg_cb',
  'rebalance_cb',
  'offset_commit_cb',
]);

/** `${env:NAME}` or `${file:PATH}`; anything else inside `${…}` is left as it is. */
const referencePattern = /\$\{(env|file):([^}]*)\}/g;

/** Reads and checks the settings named by the flag or, without it, AMENDS_KAFKA_CONFIG. */
export function loadKafkaClientSettings(flag: string | undefined, env: NodeJS.ProcessEnv): KafkaClientSettings {
  const file = flag?.trim() || env.AMENDS_KAFKA_CONFIG?.trim();
  if (!file) return noKafkaClientSettings;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw usageError(
      `--kafka-config ${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const properties: Record<string, string> = {};
  for (const entry of parseProperties(text)) {
    const where = `--kafka-config ${file} line ${entry.line}`;
    if (amendsOwnedProperties.has(entry.name)) {
      throw usageError(`${where}: property ${entry.name} is set by amends itself; remove it`);
    }
    properties[entry.name] = resolveReferences(entry.value, where, entry.name, env);
  }
  checkWithLibrdkafka(properties, file);
  return { properties, file };
}

/** A value with its `${env:NAME}` and `${file:PATH}` references replaced; `where` and `name` place a failure. */
export function resolveReferences(value: string, where: string, name: string, env: NodeJS.ProcessEnv): string {
  return value.replace(referencePattern, (_, kind: string, target: string) => {
    if (kind === 'env') {
      const resolved = env[target];
      if (resolved === undefined) throw usageError(`${where}: ${name} names \${env:${target}}, which is not set`);
      return resolved;
    }
    try {
      // A secret file usually ends in a newline that is not part of the secret.
      return readFileSync(target, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw usageError(`${where}: ${name} names \${file:${target}}, which cannot be read (${code})`);
    }
  });
}

/**
 * librdkafka is the authority on its own names and values: a client object built (not
 * connected) from the settings refuses what it would refuse later. Its message quotes the
 * offending value, which may be a secret, so only the property's name is kept.
 */
function checkWithLibrdkafka(properties: Record<string, string>, file: string): void {
  try {
    new RdKafka.Producer({ ...properties, 'bootstrap.servers': '127.0.0.1:1' });
  } catch (error) {
    const message = errorMessage(error);
    const name = /configuration property:? "([^"]+)"/.exec(message)?.[1];
    if (/No such configuration property/.test(message) && name !== undefined) {
      throw usageError(`--kafka-config ${file}: unknown librdkafka property ${name}`);
    }
    throw usageError(
      `--kafka-config ${file}: ${name === undefined ? 'librdkafka refuses these settings' : `invalid value for property ${name}`}`,
    );
  }
}

let installed: KafkaClientSettings = noKafkaClientSettings;

/** Called once by the CLI (and by tests), before any Kafka client is created. */
export function installKafkaClientSettings(settings: KafkaClientSettings): void {
  installed = settings;
}

/** The settings every client of this process applies. */
export function kafkaClientSettings(): KafkaClientSettings {
  return installed;
}
