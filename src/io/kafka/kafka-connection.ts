/**
 * How amends reaches the brokers: the bootstrap list (flag, then AMENDS_BROKERS, then the
 * local stack's default, docs/design.md#commands), the settings every librdkafka client gets so that no
 * connection attempt waits unboundedly, and a one-line description of a client error.
 */
import { RdKafka } from '@confluentinc/kafka-javascript';
import { errorMessage } from '../../kernel/error-message.js';
import { isLocalStackAddress, localStackPorts, splitHostPort } from '../process/local-stack.js';
import { kafkaClientSettings } from './client-settings.js';
import { socketConnectionSetupTimeoutMs, socketTimeoutMs } from './kafka-timeouts.js';

export const defaultBrokers = '127.0.0.1:19092';

/** The bootstrap addresses of a `bootstrap.servers` list, as written. */
export function bootstrapAddresses(brokers: string): string[] {
  return brokers
    .split(',')
    .map((a) => a.trim().replace(/^[a-z_]+:\/\//i, ''))
    .filter((a) => a !== '');
}

/**
 * What a user can do when the brokers do not answer; ends every such diagnostic. Starting the
 * local stack is advice only for the local stack's own addresses (local-stack.ts).
 */
export function brokerReachAdvice(brokers: string): string {
  const local = bootstrapAddresses(brokers).every((address) => {
    const { host, port } = splitHostPort(address);
    return isLocalStackAddress(host, port, localStackPorts.kafka);
  });
  return local
    ? ': is the broker running (npm run up) and are --brokers / AMENDS_BROKERS right?'
    : ': check the bootstrap address (--brokers, AMENDS_BROKERS or bootstrap.servers of --kafka-config), that this host can reach it, and the security settings of --kafka-config';
}

/** librdkafka error codes amends tells apart (lib/error.js of @confluentinc/kafka-javascript). */
export const kafkaErrorCodes = {
  unknownTopicOrPartition: RdKafka.CODES.ERRORS.ERR_UNKNOWN_TOPIC_OR_PART,
  topicAlreadyExists: RdKafka.CODES.ERRORS.ERR_TOPIC_ALREADY_EXISTS,
  timedOut: RdKafka.CODES.ERRORS.ERR__TIMED_OUT,
  messageTimedOut: RdKafka.CODES.ERRORS.ERR__MSG_TIMED_OUT,
  queueFull: RdKafka.CODES.ERRORS.ERR__QUEUE_FULL,
} as const;

/**
 * `--brokers` wins over the `bootstrap.servers` of --kafka-config, which wins over
 * AMENDS_BROKERS, which wins over the local stack's address: a client file's address belongs
 * with its security settings (SASL credentials sent to a plaintext port cannot work).
 */
export function resolveBrokers(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const fromFile = kafkaClientSettings().properties['bootstrap.servers'];
  const chosen = flag?.trim() || fromFile?.trim() || env.AMENDS_BROKERS?.trim() || defaultBrokers;
  return chosen;
}

/**
 * The settings shared by every librdkafka client amends creates: amends' socket limits
 * (kafka-timeouts.ts: a dead or wrong address fails within seconds), then
 * the process's --kafka-config (client-settings.ts, which may tune those limits but never
 * the properties amends owns), then the address and client id.
 */
export function librdkafkaBaseConfig(brokers: string, clientId: string): RdKafka.GlobalConfig {
  return {
    'socket.connection.setup.timeout.ms': socketConnectionSetupTimeoutMs,
    'socket.timeout.ms': socketTimeoutMs,
    ...(kafkaClientSettings().properties as RdKafka.GlobalConfig),
    'bootstrap.servers': brokers,
    'client.id': clientId,
  };
}

/** A librdkafka error as `message (code N)`; anything else as its message. */
export function describeKafkaError(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && 'message' in error) {
    const { code, message } = error as { code: unknown; message: unknown };
    return `${String(message)} (code ${String(code)})`;
  }
  return errorMessage(error);
}

/** The numeric librdkafka code of an error, when it has one. */
export function kafkaErrorCode(error: unknown): number | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'number' ? code : undefined;
  }
  return undefined;
}

/** Turns one node-style callback call of the librdkafka-style API into a promise. */
export function viaCallback<T>(start: (done: (error: unknown, result?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    start((error, result) => (error ? reject(error) : resolve(result as T)));
  });
}
