/**
 * The live source topic must still be the incarnation a namespace was created over, with its
 * partition count. A deleted and recreated topic has the same name but a new UUID: its
 * records are another history, where no namespace's frontiers and decisions apply (the
 * worker rejects it as recreated, docs/design.md#source-validation). Commands that act on a source without
 * running a worker (source-load, rebuild-create, manifest-recover) check it once here.
 * One observation, not a lock: a later recreation is caught by the next check.
 */
import { operationalError } from '../../kernel/amends-error.js';
import { retryOutages } from '../process/ride-through.js';
import { withKafkaAdmin } from './kafka-admin.js';
import { isBrokerOutage } from './kafka-errors.js';
import { type ExpectedTopic, topicMismatch } from './topic-identity.js';

/**
 * Tries of the check when the broker does not answer: the second comes after a failover's new
 * leader (a describe sent during one timed out after 10 s under load, in the 3-broker test), and
 * a broker that is simply not running still fails within ~20 s.
 */
export const liveSourceCheckAttempts = 2;

export interface ExpectedSource extends ExpectedTopic {
  /** What the refusal means, ending the diagnostic: "nothing was published". */
  consequence: string;
}

export async function checkLiveSourceTopic(brokers: string, clientId: string, expected: ExpectedSource): Promise<void> {
  // Only librdkafka's admin client is called here, so the Kafka room's test is the whole test.
  const live = await retryOutages(
    liveSourceCheckAttempts,
    () => withKafkaAdmin(brokers, clientId, (admin) => admin.describeTopic(expected.topic)),
    isBrokerOutage,
  );
  const wrong = topicMismatch(live, expected, brokers);
  if (wrong === undefined) return;
  const restart = wrong.status === 'incarnation_changed' ? ' (start over with source-create)' : '';
  throw operationalError(`source ${wrong.detail}${restart}: ${expected.consequence}`);
}
