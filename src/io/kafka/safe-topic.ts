/**
 * Creating a topic amends will rely on, source or output: never adopting an existing one,
 * with unlimited delete-only retention and, when asked, a floor of in-sync replicas, and
 * reading back what the broker actually made (docs/design.md#manifest, #output-binding).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { invalidInput, operationalError } from '../../kernel/amends-error.js';
import type { KafkaAdmin, TopicDescription } from './kafka-admin.js';
import { describeTopicConfig } from './topic-config.js';

/** Unlimited, delete-only retention: history is never removed under a namespace (docs/design.md#source-validation). */
export const safeTopicConfig: Readonly<Record<string, string>> = {
  'cleanup.policy': 'delete',
  'retention.ms': '-1',
  'retention.bytes': '-1',
};

/** After an acknowledged creation, how long the topic may take to appear in metadata. */
const topicVisibleBudgetMs = 10_000;
const topicVisiblePollMs = 200;

export interface SafeTopicRequest {
  topic: string;
  partitions: number;
  replicationFactor: number;
  /** The topic's `min.insync.replicas`, or undefined to keep the broker's default. */
  minInsyncReplicas: number | undefined;
  /** The command creating it, for diagnostics ("source-create never adopts a topic"). */
  command: string;
  /** What a failure after creation left undone, e.g. "nothing was bound: " (or ""). */
  consequence: string;
  /** How to use an existing topic instead, if the caller has a way: "; to adopt it …" (or ""). */
  existingAdvice: string;
}

function inspectAdvice(topic: string, brokers: string): string {
  return `a failed response does not prove the topic was not created: inspect topic ${topic} on ${brokers} (e.g. kafka-topics.sh --describe --topic ${topic}) before retrying, and delete it or choose another name`;
}

/** Creates the topic, refusing one that exists, and returns its description once visible. */
export async function createSafeTopic(admin: KafkaAdmin, request: SafeTopicRequest): Promise<TopicDescription> {
  const { topic, partitions, replicationFactor, command, consequence } = request;
  const existing = await admin.describeTopic(topic);
  if (existing) {
    throw invalidInput(
      `topic ${topic} already exists (${existing.incarnation}, ${existing.partitions} partitions): ${command} never adopts a topic; choose a new topic name${request.existingAdvice}`,
    );
  }
  const creation = await admin.createTopic({
    topic,
    partitions,
    replicationFactor,
    config: { ...safeTopicConfig, ...insyncConfig(request.minInsyncReplicas) },
  });
  switch (creation.outcome) {
    case 'created':
      break;
    case 'already-exists':
      // It did not exist a moment ago: someone else created it concurrently. Not ours.
      throw invalidInput(
        `topic ${topic} was created by someone else while ${command} ran (${creation.detail}): ${command} never adopts a topic; choose a new topic name`,
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
          `topic ${topic} was created with ${created.partitions} partitions instead of ${partitions}; ${consequence}inspect or delete it before use`,
        );
      }
      // Visible is not yet usable: until each partition has a leader, reads and offset lists
      // fail with "not leader" (seen right after creation on single-node KRaft).
      if (await servesEveryPartition(admin, topic, partitions)) return created;
    } else if (Date.now() >= deadline) {
      throw operationalError(
        `topic ${topic} was acknowledged as created but is not visible in metadata after ${topicVisibleBudgetMs} ms; ${consequence}inspect topic ${topic} on ${admin.brokers}`,
      );
    }
    if (Date.now() >= deadline) {
      throw operationalError(
        `topic ${topic} was created but not every partition has a leader after ${topicVisibleBudgetMs} ms; ${consequence}inspect topic ${topic} on ${admin.brokers}`,
      );
    }
    await sleep(topicVisiblePollMs);
  }
}

/** True once every partition answers an offset list, i.e. has a leader. */
export async function servesEveryPartition(admin: KafkaAdmin, topic: string, partitions: number): Promise<boolean> {
  const all = Array.from({ length: partitions }, (_, p) => p);
  return admin.listOffsets(topic, all, 'log-start').then(
    () => true,
    () => false,
  );
}

const minInsyncName = 'min.insync.replicas';

function insyncConfig(minInsyncReplicas: number | undefined): Record<string, string> {
  return minInsyncReplicas === undefined ? {} : { [minInsyncName]: String(minInsyncReplicas) };
}

/**
 * Reads the effective retention (and the in-sync floor, when the topic set one) back: a
 * broker that ignored a setting is caught here, not by a worker or a lost write.
 */
export async function checkSafeRetention(
  brokers: string,
  topic: string,
  minInsyncReplicas: number | undefined,
  consequence: string,
): Promise<void> {
  const expected: Record<string, string> = { ...safeTopicConfig, ...insyncConfig(minInsyncReplicas) };
  const names = Object.keys(expected);
  const effective = await describeTopicConfig(brokers, topic, names);
  const wrong = names.filter((name) => effective[name] !== expected[name]);
  if (wrong.length > 0) {
    const got = wrong.map((name) => `${name}=${effective[name] ?? '(absent)'}`).join(', ');
    const want = names.map((name) => `${name}=${expected[name]}`).join(', ');
    throw operationalError(
      `topic ${topic} was created but the broker reports ${got}, not ${want}; ${consequence}fix or delete topic ${topic} before use`,
    );
  }
}
