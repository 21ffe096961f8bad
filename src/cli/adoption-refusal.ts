/**
 * source-adopt's refusal: one line (the CLI's diagnostic contract) that lists every reason a
 * topic cannot be adopted, each with what would fix it, so an operator fixes them all in one
 * round instead of discovering them one by one. A setting is fixed with the exact
 * kafka-configs.sh command and its rpk equivalent; amends itself never runs them, since it
 * does not change a topic it did not create (docs/choices.md). Deleted history has no fix.
 */

import type { DeletedHistory, UnsafeRetention } from '../io/kafka/source-rules.js';
import type { AdoptionProblem } from '../io/kafka/topic-adoption.js';
import { type AmendsError, invalidInput } from '../kernel/amends-error.js';

export interface AdoptionTarget {
  namespace: string;
  topic: string;
  brokers: string;
}

/**
 * The refusal for `problems` (the topic's broken rules) and `configProblem` (the config
 * file's diagnostic when it does not fit the topic's partition count), numbered in one line.
 */
export function adoptionRefusal(
  target: AdoptionTarget,
  problems: readonly AdoptionProblem[],
  configProblem: string | undefined,
): AmendsError {
  const reasons = problems.map((p) =>
    p.reason === 'unsafe_retention' ? settingReason(p, target) : historyReason(p, target),
  );
  if (configProblem !== undefined) reasons.push(`${configProblem}: fix the config file`);
  const numbered = reasons.map((reason, i) => `(${i + 1}) ${reason}`).join('; ');
  const count = reasons.length === 1 ? '1 problem' : `${reasons.length} problems`;
  return invalidInput(
    `topic ${target.topic} cannot be adopted, ${count}: ${numbered}; nothing was changed (amends never alters a topic it did not create)`,
  );
}

function settingReason(problem: UnsafeRetention, { topic, brokers }: AdoptionTarget): string {
  const assignment = `${problem.setting}=${problem.safeValue}`;
  const fix = `fix: kafka-configs.sh --bootstrap-server ${brokers} --alter --entity-type topics --entity-name ${topic} --add-config ${assignment} (or rpk topic alter-config ${topic} --set ${assignment})`;
  // A setting can be fixed for the future; what it already removed is gone unseen (compaction
  // does not move the log start, so the offset check below cannot catch it).
  const past =
    problem.setting === 'cleanup.policy'
      ? ', but if compaction ever ran, records may be gone already and no check can tell: then adopt a complete copy under a new namespace'
      : '';
  return `${problem.detail}; ${fix}${past}`;
}

function historyReason(problem: DeletedHistory, { namespace, topic }: AdoptionTarget): string {
  const { partition, retainedStart } = problem;
  return `${problem.detail}; the history before offset ${retainedStart} on partition ${partition} is gone and amends cannot decide it, so no setting fixes this and adopting ${topic} is refused: copy the complete ledger into a new topic under a new namespace (amendsctl source-create --namespace ${namespace}-complete --topic T2, then amendsctl source-load)`;
}
