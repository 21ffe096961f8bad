import type { Migration } from './migration.js';

/**
 * The namespace registry (docs/design.md#manifest): one row per namespace, written by the first
 * process that uses the database for it. `config` is the manifest's configuration and
 * `config_digest` the lowercase hex SHA-256 of its canonical JSON (docs/design.md#configuration); the
 * digest, not the jsonb (which normalises), is what later manifests are compared with.
 */
export const namespacesMigration: Migration = {
  version: 1,
  name: 'namespaces',
  sql: `
    CREATE TABLE namespaces (
      namespace          text        PRIMARY KEY
                                     CHECK (namespace ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
      source_topic       text        NOT NULL,
      source_incarnation text        NOT NULL CHECK (source_incarnation ~ '^kafka:[0-9a-f]{32}$'),
      config             jsonb       NOT NULL,
      config_digest      text        NOT NULL CHECK (config_digest ~ '^[0-9a-f]{64}$'),
      created_at         timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX namespaces_source_incarnation ON namespaces (source_incarnation);
  `,
};
