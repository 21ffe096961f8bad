/**
 * The flags of every command that talks to Kafka (docs/design.md#commands): `--brokers LIST` and
 * `--kafka-config FILE`. Reading them installs the process's Kafka client settings
 * (client-settings.ts) before the command creates any client.
 */

import { installKafkaClientSettings, loadKafkaClientSettings } from '../io/kafka/client-settings.js';
import { defaultBrokers, resolveBrokers } from '../io/kafka/kafka-connection.js';
import { flagRows } from './help-text.js';

export const kafkaFlags = {
  brokers: { type: 'string' },
  kafkaConfig: { type: 'string' },
} as const;

/** The help of `kafkaFlags`, its descriptions at `column` of the command's Flags section. */
export function kafkaFlagsHelp(column: number): string {
  return flagRows(column, [
    ['--brokers LIST', `bootstrap servers (default: $AMENDS_BROKERS or ${defaultBrokers})`],
    ['--kafka-config FILE', 'librdkafka settings for every Kafka client (default: $AMENDS_KAFKA_CONFIG)'],
  ]);
}

/** Loads and installs --kafka-config / AMENDS_KAFKA_CONFIG; returns the bootstrap servers. */
export function kafkaEndpointFrom(
  flags: { brokers?: string | undefined; kafkaConfig?: string | undefined },
  env: NodeJS.ProcessEnv,
): string {
  installKafkaClientSettings(loadKafkaClientSettings(flags.kafkaConfig, env));
  return resolveBrokers(flags.brokers, env);
}
