/**
 * What source-adopt needs to know about a topic amends did not create (docs/operations.md,
 * "Adopting an existing topic"): its UUID and partition count, and every rule of
 * source-rules.ts it breaks today — the same rules, read from the same requests, as the
 * worker's observer applies before and after every poll. It only reads: amends never
 * changes a topic it did not create (docs/choices.md).
 *
 * The topic is described before and after its configuration and log starts are read, and
 * the survey counts only when both descriptions agree: a UUID is never reused, so the reads
 * in between were of that topic, not of one deleted and recreated meanwhile. Like every
 * observation this is a sequence of reads, not a lock; nor can it see the past (a compaction
 * or a deletion that was undone before today leaves no trace here).
 */
import { operationalError } from '../../kernel/amends-error.js';
import { type KafkaAdmin, type TopicDescription, withKafkaAdmin } from './kafka-admin.js';
import { type DeletedHistory, deletedHistory, type UnsafeRetention, unsafeRetention } from './source-rules.js';
import { describeTopicConfig, retentionConfigNames } from './topic-config.js';

export type AdoptionProblem = UnsafeRetention | DeletedHistory;

export interface TopicSurvey {
  description: TopicDescription;
  /** Every broken rule: retention settings first, then partitions in order. */
  problems: AdoptionProblem[];
}

/** The survey of `topic`, or undefined when the broker does not know it. */
export async function surveyTopicForAdoption(
  brokers: string,
  topic: string,
  clientId: string,
): Promise<TopicSurvey | undefined> {
  return withKafkaAdmin(brokers, clientId, async (admin) => {
    const before = await admin.describeTopic(topic);
    if (before === undefined) return undefined;
    const [config, starts] = await Promise.all([
      describeTopicConfig(brokers, topic, retentionConfigNames),
      logStarts(admin, before),
    ]);
    const after = await admin.describeTopic(topic);
    if (after?.incarnation !== before.incarnation || after.partitions !== before.partitions) {
      const now = after === undefined ? 'is gone' : `is now ${after.incarnation} with ${after.partitions} partitions`;
      throw operationalError(
        `topic ${topic} changed while it was checked (it was ${before.incarnation} with ${before.partitions} partitions and ${now}): nothing was adopted; run source-adopt again once nobody is changing it`,
      );
    }
    const problems: AdoptionProblem[] = unsafeRetention(topic, config);
    for (const [partition, start] of starts) {
      const gone = deletedHistory(topic, partition, start);
      if (gone) problems.push(gone);
    }
    return { description: before, problems };
  });
}

/** Each partition's log start, in partition order. */
async function logStarts(admin: KafkaAdmin, description: TopicDescription): Promise<[number, number][]> {
  const all = Array.from({ length: description.partitions }, (_, p) => p);
  const starts = await admin.listOffsets(description.topic, all, 'log-start');
  return all.map((p) => [p, starts.get(p) as number]);
}
