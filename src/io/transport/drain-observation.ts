/**
 * Whether a namespace is drained, read from the outside (`amendsctl wait --drained`): every
 * source partition decided up to its read-committed end, every decided version relayed (when
 * the namespace has an output binding) and the view at the output topic's end (when it has
 * one): what verify would find drained (docs/design.md#bounded-verifier, INCOMPLETE).
 *
 * The reads follow the chain, each after the one it depends on: the source's ends, then the
 * frontiers, then the relay's cursors, then the output topic's ends, then the view's
 * frontiers. Every position only grows, so "each at or past what the one before it showed"
 * proves the namespace drained up to the source ends of the first read. Each read is cheap
 * whatever the namespace's size: the partitions rows, the relay's index range after its
 * cursor (`pendingOutboxCountSql`, the relay's own metric), the view's partitions rows; the
 * topics through `observeTopicEnds`, which judges them as inspect does (ends only for the
 * namespace's own topic).
 */

import type { Manifest } from '../../domain/config.js';
import { int8ToSafeInteger } from '../../kernel/safe-integer.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import { type ObservationTimeouts, observeTopicEnds, type TopicStatus } from '../kafka/topic-ends-observation.js';
import { readRegisteredNamespace } from '../store/namespace-registry.js';
import type { Queryable } from '../store/postgres.js';
import { readPartitionProgress } from './chain-probe.js';
import { pendingOutboxCountSql } from './outbox-relay.js';
import { readBinding } from './output-binding.js';
import { readViewPartitions } from './view-queries.js';

/** One partition's position against its topic's end; end and lag are null when the end is unknown. */
export interface DrainPosition {
  partition: number;
  frontier: number;
  end: number | null;
  lag: number | null;
}

export interface TopicState {
  status: TopicStatus;
  detail: string | null;
}

export interface DrainObservation {
  drained: boolean;
  /** False until a worker or source-load has registered the namespace: nothing is decided yet. */
  registered: boolean;
  /** What is still behind, one phrase each; empty when drained. */
  behind: string[];
  /** Records to decide, versions to relay, output records to view (unknown ends count 0). */
  remaining: { decide: number; relay: number; view: number };
  source: TopicState;
  partitions: DrainPosition[];
  /** Null without an output binding: nothing to relay. */
  relay: { pending: number } | null;
  /** Null without an output binding: no view. */
  view: { output_topic: string; output: TopicState; partitions: DrainPosition[] } | null;
}

/** A topic that is not the namespace's (missing, recreated, repartitioned) never drains. */
export function isLastingMismatch(state: TopicState): boolean {
  return state.status !== 'ok' && state.status !== 'unreachable';
}

export async function observeDrain(
  db: Queryable,
  admin: KafkaAdmin,
  manifest: Manifest,
  timeouts: ObservationTimeouts,
): Promise<DrainObservation> {
  const { namespace, partitions: partitionCount, source_incarnation: incarnation } = manifest.config;
  // A registered namespace must be this manifest's (digest, topic): else it throws, as inspect does.
  const registered = (await readRegisteredNamespace(db, manifest)) !== undefined;
  const sourceEnds = await observeTopicEnds(
    admin,
    { topic: manifest.source_topic, incarnation, partitions: partitionCount, expectedBy: 'the manifest' },
    timeouts,
  );
  const frontiers = new Map((await readPartitionProgress(db, namespace)).map((p) => [p.partition, p.frontier]));
  const partitions = positions(partitionCount, frontiers, sourceEnds.ends);
  const binding = await readBinding(db, namespace);
  let relay: DrainObservation['relay'] = null;
  let view: DrainObservation['view'] = null;
  if (binding !== undefined) {
    const pending = await db.query<{ n: string }>(pendingOutboxCountSql, [namespace]);
    relay = { pending: int8ToSafeInteger(pending.rows[0]?.n ?? '0', 'pending outbox rows') };
    const outputEnds = await observeTopicEnds(
      admin,
      {
        topic: binding.outputTopic,
        incarnation: binding.incarnation,
        partitions: binding.partitions,
        expectedBy: 'the output binding',
      },
      timeouts,
    );
    const viewFrontiers = new Map((await readViewPartitions(db, namespace)).map((p) => [p.partition, p.frontier]));
    view = {
      output_topic: binding.outputTopic,
      output: { status: outputEnds.status, detail: outputEnds.detail },
      partitions: positions(binding.partitions, viewFrontiers, outputEnds.ends),
    };
  }
  const source = { status: sourceEnds.status, detail: sourceEnds.detail };
  return judgeDrain({ namespace, registered, source, partitions, relay, view });
}

function positions(
  count: number,
  frontiers: ReadonlyMap<number, number>,
  ends: ReadonlyMap<number, number> | null,
): DrainPosition[] {
  return Array.from({ length: count }, (_, partition) => {
    const frontier = frontiers.get(partition) ?? 0;
    const end = ends?.get(partition) ?? null;
    return { partition, frontier, end, lag: end === null ? null : Math.max(0, end - frontier) };
  });
}

type Observed = Omit<DrainObservation, 'drained' | 'behind' | 'remaining'> & { namespace: string };

/** Drained when every end is known and reached and nothing waits for the relay; else what is behind. */
export function judgeDrain({ namespace, ...observed }: Observed): DrainObservation {
  const behind: string[] = [];
  if (!observed.registered) {
    behind.push(`namespace ${namespace} is not registered yet (amends worker or amendsctl source-load registers it)`);
  }
  const decide = lagging(behind, 'source', observed.source, observed.partitions, 'records to decide');
  let relay = 0;
  let view = 0;
  if (observed.relay !== null && observed.relay.pending > 0) {
    relay = observed.relay.pending;
    behind.push(`relay: ${relay} versions not yet published to the output topic`);
  }
  if (observed.view !== null) {
    view = lagging(behind, 'view', observed.view.output, observed.view.partitions, 'output records to apply');
  }
  return { ...observed, drained: behind.length === 0, behind, remaining: { decide, relay, view } };
}

/** Adds what one stage lacks to `behind`; returns its known lag. */
function lagging(
  behind: string[],
  stage: 'source' | 'view',
  topic: TopicState,
  positions: readonly DrainPosition[],
  what: string,
): number {
  const topicName = stage === 'source' ? 'source topic' : 'output topic';
  if (topic.status !== 'ok') {
    behind.push(`${stage}: ${topicName} ${topic.status}${topic.detail === null ? '' : ` (${topic.detail})`}`);
    return 0;
  }
  const late = positions.filter((p) => (p.lag ?? 0) > 0);
  const lag = late.reduce((sum, p) => sum + (p.lag ?? 0), 0);
  if (late.length > 0) {
    const which = late.map((p) => `partition ${p.partition} at ${p.frontier} of ${p.end}`).join(', ');
    behind.push(`${stage === 'source' ? 'decide' : 'view'}: ${lag} ${what} (${which})`);
  }
  return lag;
}
