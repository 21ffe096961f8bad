/**
 * The live source topic must still be the incarnation a namespace was created over, with its
 * partition count. A deleted and recreated topic has the same name but a new UUID: its
 * records are another history, where no namespace's frontiers and decisions apply (the
 * worker rejects it as recreated, worker.md §2). Commands that act on a source without
 * running a worker (source-load, rebuild-create, manifest-recover) check it once here.
 * One observation, not a lock: a later recreation is caught by the next check.
 */
import { operationalError } from '../domain/amends-error.js';
import { withKafkaAdmin } from './kafka-admin.js';

export interface ExpectedSource {
  topic: string;
  incarnation: string;
  partitions: number;
  /** Who expects it, for the diagnostic: "the manifest", "namespace ns-1 in the database". */
  expectedBy: string;
  /** What the refusal means, ending the diagnostic: "nothing was published". */
  consequence: string;
}

export async function checkLiveSourceTopic(brokers: string, clientId: string, expected: ExpectedSource): Promise<void> {
  const { topic, incarnation, partitions, expectedBy, consequence } = expected;
  const live = await withKafkaAdmin(brokers, clientId, (admin) => admin.describeTopic(topic));
  if (!live) {
    throw operationalError(
      `source topic ${topic} does not exist on ${brokers} (${expectedBy} expects ${incarnation}): ${consequence}`,
    );
  }
  if (live.incarnation !== incarnation) {
    throw operationalError(
      `source topic ${topic} is ${live.incarnation}, but ${expectedBy} expects ${incarnation}: the topic was deleted and recreated, its records are another history (start over with source-create); ${consequence}`,
    );
  }
  if (live.partitions !== partitions) {
    throw operationalError(
      `source topic ${topic} has ${live.partitions} partitions, ${expectedBy} expects ${partitions}: ${consequence}`,
    );
  }
}
