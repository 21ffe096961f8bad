import type { Migration } from './migration.js';

/**
 * The transport's tables (docs/design.md#transport): the output binding, and the view with its own
 * per-partition frontier. The outbox itself is the worker's (migration 0002).
 *
 * - output_bindings: one row per namespace, written once by `amendsctl output-create`: the
 *   output topic, its incarnation (`kafka:` + topic UUID) and partition count. Relay and view
 *   refuse to run when the live topic's UUID differs. A topic incarnation serves one
 *   namespace only.
 * - view_partitions: one row per output partition: the view frontier (the next output topic
 *   offset to read) and what the view ignored there (stale, duplicate) or applied. Written in
 *   the same transaction as the view rows the batch changed.
 * - view_rows: the highest version seen per (item, location, day), retractions included,
 *   with the record value bytes exactly as read, so that a same-version duplicate is compared
 *   byte for byte (the relay republishes the outbox's bytes unchanged). `applied_at` is the
 *   apply's clock time (transport latency is measured against outbox.created_at).
 */
export const transportMigration: Migration = {
  version: 3,
  name: 'transport',
  sql: `
    CREATE TABLE output_bindings (
      namespace    text        PRIMARY KEY REFERENCES namespaces (namespace),
      output_topic text        NOT NULL CHECK (length(output_topic) BETWEEN 1 AND 249),
      incarnation  text        NOT NULL UNIQUE CHECK (incarnation ~ '^kafka:[0-9a-f]{32}$'),
      partitions   integer     NOT NULL CHECK (partitions >= 1),
      created_at   timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE view_partitions (
      namespace  text        NOT NULL REFERENCES output_bindings (namespace),
      partition  integer     NOT NULL CHECK (partition >= 0),
      frontier   bigint      NOT NULL DEFAULT 0 CHECK (frontier >= 0),
      applied    bigint      NOT NULL DEFAULT 0 CHECK (applied >= 0),
      stale      bigint      NOT NULL DEFAULT 0 CHECK (stale >= 0),
      duplicate  bigint      NOT NULL DEFAULT 0 CHECK (duplicate >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (namespace, partition),
      CONSTRAINT view_partitions_counts CHECK (applied + stale + duplicate <= frontier)
    );

    CREATE TABLE view_rows (
      namespace       text        NOT NULL REFERENCES output_bindings (namespace),
      item            text        COLLATE "C" NOT NULL,
      location        text        COLLATE "C" NOT NULL,
      day             text        COLLATE "C" NOT NULL CHECK (day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
      version         integer     NOT NULL CHECK (version >= 1),
      closing         bigint,
      status          text        CHECK (status IN ('NEGATIVE', 'LOW', 'OK')),
      retracted       boolean     NOT NULL,
      cause_partition integer     NOT NULL CHECK (cause_partition >= 0),
      cause_offset    bigint      NOT NULL CHECK (cause_offset >= 0),
      record_value    bytea       NOT NULL,
      -- Where the applied record was read: output topic partition and offset.
      topic_partition integer     NOT NULL CHECK (topic_partition >= 0),
      topic_offset    bigint      NOT NULL CHECK (topic_offset >= 0),
      applied_at      timestamptz NOT NULL,
      PRIMARY KEY (namespace, item, location, day),
      CONSTRAINT view_rows_retraction CHECK (
        num_nulls(closing, status) = CASE WHEN retracted THEN 2 ELSE 0 END)
    );
  `,
};
