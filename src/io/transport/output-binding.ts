/**
 * The output binding (docs/design.md#output-binding): namespace → output topic and its
 * incarnation, recorded once by `amendsctl output-create`. Relay and view read it from the
 * database and refuse to run when the live topic's UUID differs: a recreated topic with the
 * same name is a different history, and publishing into it (or reading it into the view)
 * would silently mix two.
 */

import { invalidInput, operationalError } from '../../kernel/amends-error.js';
import type { KafkaAdmin } from '../kafka/kafka-admin.js';
import type { Queryable } from '../store/postgres.js';

export interface OutputBinding {
  namespace: string;
  outputTopic: string;
  /** `kafka:` + the output topic's UUID in hex. */
  incarnation: string;
  partitions: number;
  createdAt: Date;
}

interface BindingRow {
  namespace: string;
  output_topic: string;
  incarnation: string;
  partitions: number;
  created_at: Date;
}

export async function readBinding(db: Queryable, namespace: string): Promise<OutputBinding | undefined> {
  const result = await db.query<BindingRow>(
    'SELECT namespace, output_topic, incarnation, partitions, created_at FROM output_bindings WHERE namespace = $1',
    [namespace],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  return {
    namespace: row.namespace,
    outputTopic: row.output_topic,
    incarnation: row.incarnation,
    partitions: row.partitions,
    createdAt: row.created_at,
  };
}

/**
 * Records the binding, the view's partition rows (frontier 0) and the relay's (nothing
 * published: cursor 0, migration 0007) in one transaction;
 * `inserted` is false when the namespace was bound already (concurrently): nothing changed.
 */
export async function recordBinding(
  db: Queryable,
  binding: Omit<OutputBinding, 'createdAt'>,
): Promise<{ inserted: boolean }> {
  const result = await db.query(
    `WITH b AS (
       INSERT INTO output_bindings (namespace, output_topic, incarnation, partitions)
       VALUES ($1, $2, $3, $4) ON CONFLICT (namespace) DO NOTHING RETURNING namespace, partitions),
     p AS (
       INSERT INTO view_partitions (namespace, partition)
       SELECT b.namespace, g FROM b CROSS JOIN generate_series(0, b.partitions - 1) AS g RETURNING 1),
     r AS (
       INSERT INTO relay_partitions (namespace, partition)
       SELECT b.namespace, g FROM b CROSS JOIN generate_series(0, b.partitions - 1) AS g RETURNING 1)
     SELECT (SELECT count(*) FROM b) AS bound, (SELECT count(*) FROM p) AS view_partitions,
            (SELECT count(*) FROM r) AS relay_partitions`,
    [binding.namespace, binding.outputTopic, binding.incarnation, binding.partitions],
  );
  return { inserted: Number(result.rows[0]?.bound ?? 0) === 1 };
}

/** The binding, or an actionable refusal when the namespace has none. */
export async function requireBinding(db: Queryable, namespace: string, manifestPath: string): Promise<OutputBinding> {
  const binding = await readBinding(db, namespace);
  if (!binding) {
    throw invalidInput(
      `namespace ${namespace} has no output binding: create one with amendsctl output-create --manifest ${manifestPath} --topic OUT`,
    );
  }
  return binding;
}

/**
 * The live output topic must be the bound one: same UUID, same partition count. One
 * observation, not a lock (like the worker's source checks): a topic recreated later is
 * caught by the next process start, and the relay's producer then writes to a new topic id.
 */
export async function checkLiveBinding(admin: KafkaAdmin, binding: OutputBinding): Promise<void> {
  const live = await admin.describeTopic(binding.outputTopic);
  if (!live) {
    throw operationalError(
      `output topic ${binding.outputTopic} of namespace ${binding.namespace} does not exist on ${admin.brokers} (bound to ${binding.incarnation}): it was deleted; the binding cannot be reused`,
    );
  }
  if (live.incarnation !== binding.incarnation) {
    throw operationalError(
      `output topic ${binding.outputTopic} is ${live.incarnation} on ${admin.brokers}, but namespace ${binding.namespace} is bound to ${binding.incarnation}: the topic was deleted and recreated; refusing to mix two histories`,
    );
  }
  if (live.partitions !== binding.partitions) {
    throw operationalError(
      `output topic ${binding.outputTopic} has ${live.partitions} partitions, but namespace ${binding.namespace} was bound with ${binding.partitions}: partitions were added; refusing to run`,
    );
  }
}
