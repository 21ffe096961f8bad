/**
 * The namespace registry (docs/design.md#manifest). The first process that uses the database for a
 * namespace registers its manifest; every later one must bring a manifest with the same
 * configuration digest, or it refuses to run. The read-only commands (inspect, export, tui)
 * only read it: they must not create a namespace nobody asked for.
 */

import { configDigest, type Manifest, type NamespaceConfig } from '../../domain/config.js';
import { describeConfigDifferences } from '../../domain/config-differences.js';
import { invalidInput } from '../../kernel/amends-error.js';
import { assertInvariant } from '../../kernel/invariant.js';
import type { Queryable } from './postgres.js';
import { refuseOtherRevisions } from './revision-registry.js';

export interface RegisteredNamespace {
  namespace: string;
  sourceTopic: string;
  sourceIncarnation: string;
  config: NamespaceConfig;
  configDigest: string;
  createdAt: Date;
}

/** `registered`: this call inserted the row; `unchanged`: it was there with the same digest. */
export type Registration = 'registered' | 'unchanged';

interface NamespaceRow {
  namespace: string;
  source_topic: string;
  source_incarnation: string;
  config: NamespaceConfig;
  config_digest: string;
  created_at: Date;
}

export async function readNamespace(db: Queryable, namespace: string): Promise<RegisteredNamespace | undefined> {
  const result = await db.query<NamespaceRow>(
    `SELECT namespace, source_topic, source_incarnation, config, config_digest, created_at
       FROM namespaces WHERE namespace = $1`,
    [namespace],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  return {
    namespace: row.namespace,
    sourceTopic: row.source_topic,
    sourceIncarnation: row.source_incarnation,
    config: row.config,
    configDigest: row.config_digest,
    createdAt: row.created_at,
  };
}

/**
 * A registered namespace's id (migration 0006): the per-record tables (decisions, authority,
 * output_versions, output_days, outbox, view_rows) key their rows by it, not by the text.
 * Each process resolves it once, after the namespace is registered (or found registered).
 */
export async function namespaceId(db: Queryable, namespace: string): Promise<number> {
  const result = await db.query<{ id: number }>(namespaceIdSql, [namespace]);
  return namespaceIdOf(result.rows, namespace);
}

/** The statement behind `namespaceId`, for the store's own session (postgres-state.ts). */
export const namespaceIdSql = 'SELECT id FROM namespaces WHERE namespace = $1';

/** `namespaceIdSql`'s answer. Every caller has registered the namespace or found it registered first. */
export function namespaceIdOf(rows: readonly { id: unknown }[], namespace: string): number {
  const id = rows[0]?.id;
  assertInvariant(
    typeof id === 'number' && Number.isSafeInteger(id) && id >= 1,
    `namespace ${namespace} has no id: it is not registered`,
  );
  return id;
}

/**
 * Inserts (namespace, source_topic, config, digest) when absent; when present, accepts only
 * the same digest and source topic. Safe under concurrent first use: ON CONFLICT DO NOTHING,
 * then whoever lost the race compares with the winner's row.
 */
export async function registerNamespace(db: Queryable, manifest: Manifest): Promise<Registration> {
  const { config } = manifest;
  const digest = configDigest(config);
  const inserted = await db.query(
    `INSERT INTO namespaces (namespace, source_topic, source_incarnation, config, config_digest)
     VALUES ($1, $2, $3, $4::jsonb, $5)
     ON CONFLICT (namespace) DO NOTHING`,
    [config.namespace, manifest.source_topic, config.source_incarnation, JSON.stringify(config), digest],
  );
  if (inserted.rowCount === 1) {
    // A new namespace has revision 1 alone: a manifest naming more belongs to another database.
    await refuseOtherRevisions(db, manifest);
    return 'registered';
  }
  const existing = await readNamespace(db, config.namespace);
  if (!existing) {
    // Deleted between our INSERT and SELECT: nothing in amends deletes namespaces.
    throw invalidInput(`namespace ${config.namespace} vanished while registering it: run the command again`);
  }
  refuseOtherManifest(existing, manifest);
  await refuseOtherRevisions(db, manifest);
  return 'unchanged';
}

/**
 * The read-only counterpart of `registerNamespace` (inspect, export, tui): the manifest's
 * namespace as registered, or undefined when it is not; it never inserts. A registered row
 * is compared with the manifest exactly as registration compares it.
 */
export async function readRegisteredNamespace(
  db: Queryable,
  manifest: Manifest,
): Promise<RegisteredNamespace | undefined> {
  const existing = await readNamespace(db, manifest.config.namespace);
  if (existing) {
    refuseOtherManifest(existing, manifest);
    await refuseOtherRevisions(db, manifest);
  }
  return existing;
}

/** A registered namespace accepts only the manifest it was registered with (digest and topic). */
function refuseOtherManifest(existing: RegisteredNamespace, manifest: Manifest): void {
  const { config } = manifest;
  const digest = configDigest(config);
  if (existing.configDigest !== digest) {
    // The digests too: what `export --what revisions` and other hosts' manifests show.
    const fields = describeConfigDifferences(existing.config, config);
    const digests = `config digest ${existing.configDigest} registered, ${digest} in the manifest`;
    const differ = fields === '' ? digests : `${fields}; ${digests}`;
    throw invalidInput(
      `namespace ${config.namespace} is registered with another configuration than this manifest's (${differ}): use the manifest saved when the namespace was created (amendsctl manifest-recover --namespace ${config.namespace} rebuilds it), or choose a new namespace`,
    );
  }
  if (existing.sourceTopic !== manifest.source_topic) {
    throw invalidInput(
      `namespace ${config.namespace} is registered for source topic ${existing.sourceTopic}, but this manifest names ${manifest.source_topic}`,
    );
  }
}
