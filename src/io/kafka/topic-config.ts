/**
 * The effective configuration of a topic, as the broker reports it (DescribeConfigs).
 *
 * Why kafkajs here: @confluentinc/kafka-javascript 1.10.1 has no DescribeConfigs in either
 * of its APIs (docs/design.md#library-facts, upstream issue #444, open); kafkajs' admin.describeConfigs
 * works on Node 20. This is the only place amends uses kafkajs.
 */
// Default import: kafkajs is CommonJS and Node's ESM loader exposes ConfigResourceTypes only on the
// default export (checked with kafkajs 2.2.4 on Node 20), not as a named export.
import { setTimeout as sleep } from 'node:timers/promises';
import kafkajs from 'kafkajs';
import { operationalError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { socketConnectCause } from './broker-reach.js';
import { kafkaClientSettings } from './client-settings.js';
import { kafkaError } from './kafka-errors.js';
import { kafkajsSecurity } from './kafkajs-security.js';

/** Bounds for the kafkajs connection and each request. */
const connectionTimeoutMs = 3_000;
const requestTimeoutMs = 5_000;
const retries = 2;
/**
 * kafkajs sends DescribeConfigs to the metadata's "controller", which KRaft picks among the
 * brokers it believes alive: for broker.session.timeout.ms (9 s by default) after a broker dies
 * that may be the dead one. A connection failure is retried until this much time has passed,
 * so one dead broker of a cluster is not a failed read (without it, source-load right after a
 * leader's SIGKILL on the local 3-broker cluster failed: "connect ECONNREFUSED" to the dead one).
 */
const deadBrokerRetryMs = 12_000;
const deadBrokerPauseMs = 500;
const connectionFailure =
  /Connection error|ECONNREFUSED|ECONNRESET|Connection timeout|Request .*timed out|NOT_CONTROLLER/i;

/** The settings that decide whether history can disappear (docs/design.md#source-validation). */
export const retentionConfigNames = ['cleanup.policy', 'retention.ms', 'retention.bytes'] as const;

/**
 * A kafkajs admin connection kept open across calls: the worker reads the configuration after
 * every non-empty poll (docs/design.md#source-validation), so a connection per call would cost a handshake each time.
 */
export class TopicConfigReader {
  private closed = false;

  private constructor(
    private readonly admin: kafkajs.Admin,
    readonly brokers: string,
  ) {}

  static async connect(brokers: string, clientId: string): Promise<TopicConfigReader> {
    const kafka = new kafkajs.Kafka({
      brokers: brokers.split(',').map((b) => b.trim()),
      clientId,
      connectionTimeout: connectionTimeoutMs,
      requestTimeout: requestTimeoutMs,
      retry: { retries, initialRetryTime: 200, maxRetryTime: 1_000 },
      // kafkajs logs to the console by default; amends' stderr carries its own diagnostics only.
      logLevel: kafkajs.logLevel.NOTHING,
      // The same cluster security as every librdkafka client of the process (--kafka-config).
      ...kafkajsSecurity(kafkaClientSettings()),
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
    } catch (error) {
      await admin.disconnect().catch(() => {});
      throw kafkaError(
        `cannot connect to ${brokers} to read topic configurations: ${socketConnectCause(brokers, error)}`,
        error,
      );
    }
    return new TopicConfigReader(admin, brokers);
  }

  /**
   * Returns name → value for the requested names (all of the topic's entries when `names` is
   * omitted). A value the broker marks sensitive comes back as null.
   */
  async describe(topic: string, names?: readonly string[]): Promise<Record<string, string | null>> {
    const deadline = Date.now() + deadBrokerRetryMs;
    for (;;) {
      try {
        return await this.describeOnce(topic, names);
      } catch (error) {
        const cause = (error as { cause?: unknown }).cause;
        if (this.closed || !connectionFailure.test(errorMessage(cause)) || Date.now() >= deadline) throw error;
        await sleep(deadBrokerPauseMs);
      }
    }
  }

  private async describeOnce(topic: string, names?: readonly string[]): Promise<Record<string, string | null>> {
    if (this.closed) throw operationalError(`cannot read the configuration of topic ${topic}: the reader is closed`);
    try {
      const response = await this.admin.describeConfigs({
        resources: [
          {
            type: kafkajs.ConfigResourceTypes.TOPIC,
            name: topic,
            ...(names === undefined ? {} : { configNames: [...names] }),
          },
        ],
        includeSynonyms: false,
      });
      const resource = response.resources.find((r) => r.resourceName === topic);
      if (!resource) throw new Error(`no configuration returned for topic ${topic}`);
      if (resource.errorCode !== 0) throw new Error(resource.errorMessage || `error code ${resource.errorCode}`);
      const config: Record<string, string | null> = {};
      for (const entry of resource.configEntries) {
        config[entry.configName] = entry.isSensitive ? null : entry.configValue;
      }
      return config;
    } catch (error) {
      throw kafkaError(
        `cannot read the configuration of topic ${topic} from ${this.brokers}: ${errorMessage(error)}`,
        error,
      );
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.admin.disconnect().catch(() => {});
  }
}

/** One short-lived connection for a single read (source-create). */
export async function describeTopicConfig(
  brokers: string,
  topic: string,
  names?: readonly string[],
): Promise<Record<string, string | null>> {
  const reader = await TopicConfigReader.connect(brokers, 'amends-topic-config').catch((error: unknown) => {
    throw kafkaError(`cannot read the configuration of topic ${topic}: ${errorMessage(error)}`, error);
  });
  try {
    return await reader.describe(topic, names);
  } finally {
    await reader.close();
  }
}
