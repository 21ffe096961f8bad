/**
 * `config-revise`'s transaction (docs/design.md#configuration-revisions): one transaction that
 * makes every partition row exist and locks them all, takes each partition's frontier as the
 * new revision's position, reads which keys the change touches have decisions, pins or refuses
 * them (domain/revision-rules.ts), appends the revision and raises every row's revision.
 *
 * While the rows are locked no batch commits, so every record at or past a position is still
 * undecided and every record before it was decided under the revisions before: nothing
 * decided changes. A worker that read the older chain is refused at its next commit (the
 * commit checks the row's revision, as it checks the epoch) and reads the chain again.
 */

import type pg from 'pg';
import { canonicalJson } from '../../domain/canonical-json.js';
import type { ConfigFile, Manifest, NamespaceConfig } from '../../domain/config.js';
import { type ConfigRevision, latestConfig, nextRevision, type RevisionChain } from '../../domain/config-revision.js';
import { changedTerms, type KeyRef, pinDecided, refuseNoEffect, revisedConfig } from '../../domain/revision-rules.js';
import { int8ToSafeInteger } from '../../kernel/safe-integer.js';
import { textArray } from './array-literal.js';
import { namespaceId } from './namespace-registry.js';
import { withPooledClient } from './pooled-client.js';
import type { Database } from './postgres.js';
import { readRevisions } from './revision-registry.js';
import { appendRevisionSql, decidedAmongSql, decidedKeysSql, lockPartitionsSql } from './sql/config-revisions.js';

export interface RevisionMade {
  /** Revisions 2… after this one was appended (it is the last). */
  revisions: ConfigRevision[];
  /** Decided keys the revision lists with their terms unchanged (domain/revision-rules.ts). */
  pinned: KeyRef[];
}

type Client = pg.PoolClient;

export async function reviseConfig(
  db: Database,
  manifest: Manifest,
  file: ConfigFile,
  what: string,
): Promise<RevisionMade> {
  return withPooledClient(db.pool, async (client) => {
    await client.query('BEGIN');
    try {
      const made = await appendRevision(client, manifest.config, file, what);
      await client.query('COMMIT');
      return made;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  });
}

async function appendRevision(client: Client, base: NamespaceConfig, file: ConfigFile, what: string) {
  const { namespace, partitions } = base;
  const rows = await client.query<{ frontier: string }>(lockPartitionsSql, [namespace, partitions]);
  const from = rows.rows.map((r, p) => int8ToSafeInteger(r.frontier, `partition ${p}'s frontier`));
  const chain: RevisionChain = { base, revisions: await readRevisions(client, base) };
  const previous = latestConfig(chain);
  const next = revisedConfig(chain, file, what);
  const decided = await decidedKeys(client, await namespaceId(client, namespace), previous, next);
  const { config, pinned } = pinDecided(previous, next, decided);
  refuseNoEffect(previous, config, pinned.length, what);
  const revision = nextRevision(chain, from, config);
  const text = canonicalJson(config);
  await client.query(appendRevisionSql, [namespace, revision.revision, `{${from.join(',')}}`, text, revision.digest]);
  return { revisions: [...chain.revisions, revision], pinned };
}

/**
 * The keys with decisions among those whose terms the change touches: the listed ones it
 * changes, or, when it changes the default rule, every key with decisions (one index probe per key).
 */
async function decidedKeys(
  client: Client,
  nsId: number,
  previous: NamespaceConfig,
  next: NamespaceConfig,
): Promise<KeyRef[]> {
  const changed = changedTerms(previous, next);
  if (changed.defaultChanged) return (await client.query<KeyRef>(decidedKeysSql, [nsId])).rows;
  if (changed.listed.length === 0) return [];
  const items = textArray(changed.listed.map((k) => k.item));
  const locations = textArray(changed.listed.map((k) => k.location));
  return (await client.query<KeyRef>(decidedAmongSql, [nsId, items, locations])).rows;
}
