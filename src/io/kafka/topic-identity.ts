/**
 * Whether a live topic is still the one a namespace was created over (or bound to): the same
 * UUID (a recreated topic has the same name and another history) and the same partition
 * count (added partitions break the key → partition mapping). One judgement, used by the
 * commands that refuse (live-source-topic.ts) and by inspect, which reports
 * (topic-ends-observation.ts).
 */
import type { TopicDescription } from './kafka-admin.js';

export interface ExpectedTopic {
  topic: string;
  /** `kafka:` + the UUID the namespace was created over (or the output binding's). */
  incarnation: string;
  partitions: number;
  /** Who expects it, for the detail: "the manifest", "the output binding". */
  expectedBy: string;
}

export type TopicMismatch = 'topic_missing' | 'incarnation_changed' | 'partitions_changed';

/** Undefined when `live` is the expected topic; else what is wrong, in one line. */
export function topicMismatch(
  live: TopicDescription | undefined,
  expected: ExpectedTopic,
  brokers: string,
): { status: TopicMismatch; detail: string } | undefined {
  const { topic, incarnation, partitions, expectedBy } = expected;
  if (live === undefined) {
    return {
      status: 'topic_missing',
      detail: `topic ${topic} does not exist on ${brokers} (${expectedBy} expects ${incarnation})`,
    };
  }
  if (live.incarnation !== incarnation) {
    return {
      status: 'incarnation_changed',
      detail: `topic ${topic} is ${live.incarnation}, but ${expectedBy} expects ${incarnation}: the topic was deleted and recreated, its records are another history`,
    };
  }
  if (live.partitions !== partitions) {
    return {
      status: 'partitions_changed',
      detail: `topic ${topic} has ${live.partitions} partitions, but ${expectedBy} expects ${partitions}: the key to partition mapping no longer holds`,
    };
  }
  return undefined;
}
