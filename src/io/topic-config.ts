/**
 * The effective configuration of a topic, as the broker reports it (DescribeConfigs).
 *
 * Why kafkajs here: @confluentinc/kafka-javascript 1.10.1 has no DescribeConfigs in either
 * of its APIs (library-notes.md, upstream issue #444, open); kafkajs' admin.describeConfigs
 * works on Node 20. This is the only place amends uses kafkajs.
 */
// Default import: kafkajs is CommonJS and Node's ESM loader exposes ConfigResourceTypes only on the
// default export (checked with kafkajs 2.2.4 on Node 20), not as a named export.
import kafkajs from 'kafkajs';
import { operationalError } from '../domain/amends-error.js';

/** Bounds for the one short-lived kafkajs connection of a call. */
const connectionTimeoutMs = 3_000;
const requestTimeoutMs = 5_000;
const retries = 2;

/** The settings that decide whether history can disappear (worker.md §2). */
export const retentionConfigNames = ['cleanup.policy', 'retention.ms', 'retention.bytes'] as const;

/**
 * Returns name → value for the requested names (all of the topic's entries when `names` is
 * omitted). A value the broker marks sensitive comes back as null.
 */
export async function describeTopicConfig(
  brokers: string,
  topic: string,
  names?: readonly string[],
): Promise<Record<string, string | null>> {
  const kafka = new kafkajs.Kafka({
    brokers: brokers.split(',').map((b) => b.trim()),
    clientId: 'amends-topic-config',
    connectionTimeout: connectionTimeoutMs,
    requestTimeout: requestTimeoutMs,
    retry: { retries, initialRetryTime: 200, maxRetryTime: 1_000 },
    // kafkajs logs to the console by default; amends' stderr carries its own diagnostics only.
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const response = await admin.describeConfigs({
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
    for (const entry of resource.configEntries) config[entry.configName] = entry.isSensitive ? null : entry.configValue;
    return config;
  } catch (error) {
    throw operationalError(
      `cannot read the configuration of topic ${topic} from ${brokers}: ${(error as Error).message}`,
      error,
    );
  } finally {
    await admin.disconnect().catch(() => {});
  }
}
