/**
 * The configuration revisions' statements (migration 0008, docs/design.md#configuration-revisions):
 * reading a namespace's chain, and `config-revise`'s steps, which run in one transaction.
 */

import type { NamespaceConfig } from '../../../domain/config.js';
import { type ConfigRevision, parseRevisions } from '../../../domain/config-revision.js';
import { int8ToSafeInteger } from '../../../kernel/safe-integer.js';

/** $1 namespace: revisions 2… in order (revision 1 is the registered configuration). */
export const chainSql = `
  SELECT revision, from_offsets::text[] AS from_offsets, config_text, digest
    FROM config_revisions WHERE namespace = $1 ORDER BY revision`;

export interface RevisionRow {
  revision: number;
  from_offsets: string[];
  config_text: string;
  digest: string;
}

/** The stored revisions over `base`, checked as a manifest's are: a broken chain is an error. */
export function revisionsOf(rows: readonly RevisionRow[], base: NamespaceConfig): ConfigRevision[] {
  const entries = rows.map((row) => ({
    revision: row.revision,
    from: row.from_offsets.map((o, p) => int8ToSafeInteger(o, `revision ${row.revision} from[${p}]`)),
    config: JSON.parse(row.config_text) as unknown,
    digest: row.digest,
  }));
  return parseRevisions(entries, base, `namespace ${base.namespace}'s stored revisions`);
}

/**
 * `config-revise`, first step: a row for every partition (a never-claimed one gets epoch 1 and
 * no owner, so the first claim's epoch is 2), then every row locked, in partition order.
 * $1 namespace, $2 partitions.
 */
export const lockPartitionsSql = `
  WITH made AS (
    INSERT INTO partitions (namespace, partition, epoch)
    SELECT $1, p, 1 FROM generate_series(0, $2::int - 1) AS p
    ON CONFLICT (namespace, partition) DO NOTHING
  )
  SELECT partition, frontier, config_revision FROM partitions
   WHERE namespace = $1 ORDER BY partition FOR UPDATE`;

/** Keys with authority among $2/$3 (items, locations); $1 the namespace's id. */
export const decidedAmongSql = `
  SELECT u.item, u.location FROM unnest($2::text[], $3::text[]) AS u(item, location)
   WHERE EXISTS (SELECT 1 FROM authority a WHERE a.ns = $1 AND a.item = u.item COLLATE "C"
                                             AND a.location = u.location COLLATE "C")`;

/**
 * Every key with authority, $1 the namespace's id: a skip scan of the primary key (one probe
 * per key, not one row per transaction), so its cost follows the number of keys.
 */
export const decidedKeysSql = `
  WITH RECURSIVE k AS (
    (SELECT item, location FROM authority WHERE ns = $1 ORDER BY item, location LIMIT 1)
    UNION ALL
    SELECT n.item, n.location FROM k CROSS JOIN LATERAL (
      SELECT a.item, a.location FROM authority a
       WHERE a.ns = $1 AND (a.item, a.location) > (k.item, k.location)
       ORDER BY a.item, a.location LIMIT 1) AS n
  )
  SELECT item, location FROM k`;

/** $1 namespace, $2 revision, $3 from offsets, $4 config as canonical JSON, $5 digest. */
export const appendRevisionSql = `
  WITH r AS (
    INSERT INTO config_revisions (namespace, revision, from_offsets, config, config_text, digest)
    VALUES ($1, $2, $3::bigint[], $4::jsonb, $4, $5)
  )
  UPDATE partitions SET config_revision = $2 WHERE namespace = $1`;
