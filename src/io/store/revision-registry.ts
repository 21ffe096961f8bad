/**
 * A namespace's configuration revisions as stored (migration 0008), read outside the worker's
 * store session: by manifest-recover, verify, export, and by every command that takes a
 * manifest, which must not name revisions the database does not hold.
 */

import type { Manifest, NamespaceConfig } from '../../domain/config.js';
import { describeConfigDifferences } from '../../domain/config-differences.js';
import type { ConfigRevision } from '../../domain/config-revision.js';
import { revisionLines } from '../../domain/export-lines.js';
import { invalidInput } from '../../kernel/amends-error.js';
import type { Queryable } from './postgres.js';
import { chainSql, type RevisionRow, revisionsOf } from './sql/config-revisions.js';

/** Revisions 2… of the namespace whose revision 1 is `base`, checked digest by digest. */
export async function readRevisions(db: Queryable, base: NamespaceConfig): Promise<ConfigRevision[]> {
  const result = await db.query<RevisionRow>(chainSql, [base.namespace]);
  return revisionsOf(result.rows, base);
}

/** `export --what revisions`: the whole chain over `base`, revision 1 first (a handful of lines). */
export async function* exportRevisionLines(db: Queryable, base: NamespaceConfig): AsyncGenerator<string> {
  yield* revisionLines({ base, revisions: await readRevisions(db, base) });
}

/**
 * A manifest's revisions must be the stored ones (a stored chain may be longer: the manifest
 * was saved before a later revision, and every process reads the chain from the database).
 */
export async function refuseOtherRevisions(db: Queryable, manifest: Manifest): Promise<void> {
  const listed = manifest.revisions ?? [];
  if (listed.length === 0) return;
  const stored = await readRevisions(db, manifest.config);
  const { namespace } = manifest.config;
  for (const r of listed) {
    const held = stored[r.revision - 2];
    if (held === undefined || held.digest !== r.digest) {
      const fields =
        held === undefined ? '' : describeConfigDifferences(held, r, { was: 'in the database', is: 'in the manifest' });
      const there =
        held === undefined ? 'has no such revision' : `holds another one (${fields || `digest ${held.digest}`})`;
      // A revision the database lacks may also have been lost with commits: never advise
      // manifest-recover alone then, which would carry on under the configuration before it.
      const lost =
        held === undefined
          ? '; or the revision was lost when this database went back in time (a restored backup, an asynchronous failover: docs/operations.md, "When the database goes back in time")'
          : '';
      throw invalidInput(
        `the manifest's revision ${r.revision} of namespace ${namespace} has digest ${r.digest}, but the database ${there}: use the manifest config-revise or manifest-recover printed for this database${lost}`,
      );
    }
  }
}
