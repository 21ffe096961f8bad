import type { Migration } from './migration.js';

/**
 * The outbox envelope becomes part of its output version's row, and the relay's progress one
 * cursor per output partition (issue 15: fewer row writes per record). Before, each version
 * cost a second row with its own three indexes (outbox) and, once published, an UPDATE of
 * that row (a new row version, its indexes touched again); now the envelope's bytes ride in
 * the version's row (one more index entry) and the relay writes one row per partition per
 * batch.
 *
 * Why a cursor is exact: a version's `id` is drawn from one sequence inside the batch
 * statement, after it has locked its source partition's row (postgres-state.ts), and the
 * next batch of that partition waits for the lock until this one has committed. So within an
 * output partition (= the cause partition: the stock key maps to both), ids grow in commit
 * order and what is visible is always a prefix: "every id up to the cursor" is exactly the
 * published set, and nothing can commit behind it later.
 *
 * Existing namespaces are converted in place:
 * - output_versions gains `id`, `record_key`, `record_value` and `created_at`, copied from the
 *   version's envelope (same id, same bytes, same time). A version without an envelope, an
 *   envelope without a version or one addressed to another partition than its version's cause
 *   breaks an invariant: the whole migration rolls back, nothing changed.
 * - relay_partitions: one row per bound namespace's output partition, `published_through` =
 *   the last id before that partition's first unpublished envelope (the relay marked only
 *   delivered prefixes per partition, so nothing published lies after it), or its last id.
 * - The outbox's sequence carries on as the versions' (ids stay unique and growing); the
 *   outbox table goes, and `outbox` becomes a view with the same columns, `published` in
 *   place of `published_at` (the cursor knows whether, not when).
 */
export const outboxInOutputVersionsMigration: Migration = {
  version: 7,
  name: 'outbox_in_output_versions',
  // Copying a large ledger's envelopes once may take longer than a normal statement.
  statementTimeoutMs: 3_600_000,
  sql: `
    ALTER TABLE output_versions
      ADD COLUMN id           bigint,
      ADD COLUMN record_key   bytea,
      ADD COLUMN record_value bytea,
      ADD COLUMN created_at   timestamptz;

    UPDATE output_versions v
       SET id = o.id, record_key = o.record_key, record_value = o.record_value, created_at = o.created_at
      FROM outbox o
     WHERE o.ns = v.ns AND o.item = v.item AND o.location = v.location AND o.day = v.day
       AND o.version = v.version
       AND amends_assert(o.partition = v.cause_partition,
                         'outbox envelope ' || o.id || ' is for partition ' || o.partition
                         || ', its version was caused on partition ' || v.cause_partition);

    SELECT amends_assert(NOT EXISTS (SELECT 1 FROM output_versions WHERE id IS NULL),
                         'an output version without its outbox envelope');
    SELECT amends_assert((SELECT count(*) FROM outbox) = (SELECT count(*) FROM output_versions),
                         'an outbox envelope without its output version');

    CREATE TABLE relay_partitions (
      namespace         text        NOT NULL REFERENCES output_bindings (namespace),
      partition         integer     NOT NULL CHECK (partition >= 0),
      published_through bigint      NOT NULL DEFAULT 0 CHECK (published_through >= 0),
      updated_at        timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (namespace, partition)
    );
    INSERT INTO relay_partitions (namespace, partition, published_through)
    SELECT b.namespace, p.partition,
           coalesce((SELECT min(o.id) - 1 FROM outbox o
                      WHERE o.ns = n.id AND o.partition = p.partition AND o.published_at IS NULL),
                    (SELECT max(o.id) FROM outbox o WHERE o.ns = n.id AND o.partition = p.partition),
                    0)
      FROM output_bindings b
      JOIN namespaces n ON n.namespace = b.namespace
      CROSS JOIN LATERAL generate_series(0, b.partitions - 1) AS p(partition);

    ALTER SEQUENCE outbox_id_seq OWNED BY output_versions.id;
    ALTER SEQUENCE outbox_id_seq RENAME TO output_versions_id_seq;
    DROP TABLE outbox;
    ALTER TABLE output_versions
      ALTER COLUMN id SET DEFAULT nextval('output_versions_id_seq'),
      ALTER COLUMN id SET NOT NULL,
      ALTER COLUMN record_key SET NOT NULL,
      ALTER COLUMN record_value SET NOT NULL,
      ALTER COLUMN created_at SET DEFAULT now(),
      ALTER COLUMN created_at SET NOT NULL;
    -- The relay's read: an output partition's versions after its cursor, in id order.
    CREATE UNIQUE INDEX output_versions_outbox_order ON output_versions (ns, cause_partition, id);

    CREATE VIEW outbox AS
      SELECT v.id, v.ns, v.cause_partition AS partition, v.item, v.location, v.day, v.version,
             v.record_key, v.record_value, v.created_at,
             v.id <= coalesce(r.published_through, 0) AS published
        FROM output_versions v
        JOIN namespaces n ON n.id = v.ns
        LEFT JOIN relay_partitions r ON r.namespace = n.namespace AND r.partition = v.cause_partition;
  `,
};
