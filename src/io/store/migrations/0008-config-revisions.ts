import type { Migration } from './migration.js';

/**
 * Configuration revisions (docs/design.md#configuration-revisions). A namespace's configuration
 * as registered stays revision 1 in `namespaces`; `config_revisions` holds revisions 2…, each a
 * whole configuration with the source offset per partition it starts at and its chained digest
 * (src/domain/config-revision.ts). Existing namespaces are converted in place by the default:
 * every partition row is at revision 1, the only one there is.
 *
 * - partitions.config_revision: the newest revision the namespace has. `config-revise` raises it
 *   on every partition row in the transaction that appends the revision, with those rows
 *   locked; the batch commit checks it as it checks the epoch, so a worker that read an older
 *   chain decides nothing under it.
 * - Rows are only appended: nothing updates or deletes a revision (the digest chain would say so).
 */
export const configRevisionsMigration: Migration = {
  version: 8,
  name: 'config_revisions',
  sql: `
    ALTER TABLE partitions ADD COLUMN config_revision integer NOT NULL DEFAULT 1 CHECK (config_revision >= 1);

    CREATE TABLE config_revisions (
      namespace   text        NOT NULL REFERENCES namespaces (namespace),
      revision    integer     NOT NULL CHECK (revision >= 2),
      from_offsets bigint[]   NOT NULL CHECK (cardinality(from_offsets) >= 1 AND 0 <= ALL (from_offsets)),
      config      jsonb       NOT NULL,
      -- The configuration as canonical JSON text: the digest covers it, and jsonb normalises.
      config_text text        NOT NULL,
      digest      text        NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$'),
      created_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (namespace, revision)
    );
  `,
};
