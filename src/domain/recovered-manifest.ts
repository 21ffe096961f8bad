/**
 * A manifest rebuilt from its namespace's registry row (docs/design.md#manifest, manifest-recover).
 * The row is trusted only as far as it checks out: the config must be a valid configuration
 * of this very namespace and incarnation, and its digest must be the stored digest (the
 * digest was computed from the manifest at registration, so a match means this is that
 * configuration; jsonb's reordering of members does not change canonical JSON).
 */
import { invalidInput } from '../kernel/amends-error.js';
import { configDigest, type Manifest, parseManifest } from './config.js';

/** What the registry stores for a namespace (the namespaces table). */
export interface StoredNamespace {
  namespace: string;
  sourceTopic: string;
  sourceIncarnation: string;
  config: unknown;
  configDigest: string;
}

export function manifestFromStored(stored: StoredNamespace): Manifest {
  const where = `namespace ${stored.namespace} in the database`;
  const manifest = parseManifest({ source_topic: stored.sourceTopic, config: stored.config }, where);
  const { config } = manifest;
  if (config.namespace !== stored.namespace) {
    throw invalidInput(`${where}: its stored config names namespace ${config.namespace}; no manifest printed`);
  }
  if (config.source_incarnation !== stored.sourceIncarnation) {
    throw invalidInput(
      `${where}: its stored config says ${config.source_incarnation}, its source_incarnation column ${stored.sourceIncarnation}; no manifest printed`,
    );
  }
  const digest = configDigest(config);
  if (digest !== stored.configDigest) {
    throw invalidInput(
      `${where}: its stored config has digest ${digest}, but the stored config_digest is ${stored.configDigest}: the registry row was altered; no manifest printed`,
    );
  }
  return manifest;
}
