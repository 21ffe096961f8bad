/**
 * The read-committed ends of a topic *as the namespace knows it*, for inspect and the
 * dashboard. Ends are read by topic name, so on their own they could belong to a recreated
 * topic (new UUID, another history) or a topic with added partitions; and a failed read
 * says nothing about why it failed. So the topic is described before and after the ends
 * are listed, and the ends are reported only when both descriptions show the expected UUID
 * and partition count: a UUID is never reused, so the listing in between read that topic.
 * Otherwise the status says what is wrong (docs/design.md#inspection; README: inspect).
 *
 * Like every observation (docs/choices.md), this is a sequence of reads, not a lock.
 */
import { errorMessage } from '../../kernel/error-message.js';
import { adminRequestTimeoutMs, type KafkaAdmin, type TopicDescription } from './kafka-admin.js';
import { type ExpectedTopic, topicMismatch } from './topic-identity.js';

export type { ExpectedTopic } from './topic-identity.js';

export type TopicStatus = 'ok' | 'unreachable' | 'topic_missing' | 'incarnation_changed' | 'partitions_changed';

export interface TopicEndsObservation {
  status: TopicStatus;
  /** One line saying what is wrong; null when ok. */
  detail: string | null;
  /** Per partition 0..partitions-1; null unless the status is ok. */
  ends: Map<number, number> | null;
}

export interface ObservationTimeouts {
  /** The first request also connects (bootstrap, then the broker it names): give it room. */
  firstMs: number;
  /** Later requests run on the connection the first one made. */
  nextMs: number;
}

/**
 * A one-shot command's budgets (inspect, wait). The first request connects a fresh admin
 * client: bootstrap, then a second connection to the broker the metadata names, which
 * librdkafka opens on its 1 s timer. On a loaded 2-core
 * machine that took over 3 s in 2 of 20 runs (the old single 3 s budget, reported as
 * "broker unreachable"). An unreachable broker therefore costs about 10 s.
 */
export const commandObservationTimeouts: ObservationTimeouts = { firstMs: adminRequestTimeoutMs, nextMs: 5_000 };

export async function observeTopicEnds(
  admin: KafkaAdmin,
  expected: ExpectedTopic,
  timeouts: ObservationTimeouts,
): Promise<TopicEndsObservation> {
  const before = await mismatch(admin, expected, timeouts.firstMs);
  if (before) return before;
  const partitions = Array.from({ length: expected.partitions }, (_, p) => p);
  let ends: Map<number, number>;
  try {
    ends = await admin.listOffsets(expected.topic, partitions, 'read-committed-end', timeouts.nextMs);
  } catch (error) {
    // The topic may have gone or changed since it was described: that, not the failed
    // listing, is then the news. Otherwise the ends are simply out of reach.
    return (await mismatch(admin, expected, timeouts.nextMs)) ?? unreachable(error);
  }
  return (await mismatch(admin, expected, timeouts.nextMs)) ?? { status: 'ok', detail: null, ends };
}

/** Describes the topic: undefined when it is the expected one, else what is wrong. */
async function mismatch(
  admin: KafkaAdmin,
  expected: ExpectedTopic,
  timeoutMs: number,
): Promise<TopicEndsObservation | undefined> {
  let live: TopicDescription | undefined;
  try {
    live = await admin.describeTopic(expected.topic, timeoutMs);
  } catch (error) {
    return unreachable(error);
  }
  const wrong = topicMismatch(live, expected, admin.brokers);
  return wrong === undefined ? undefined : notOk(wrong.status, wrong.detail);
}

function unreachable(error: unknown): TopicEndsObservation {
  return notOk('unreachable', errorMessage(error));
}

function notOk(status: Exclude<TopicStatus, 'ok'>, detail: string): TopicEndsObservation {
  return { status, detail, ends: null };
}
