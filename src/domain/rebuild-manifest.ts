/**
 * The manifest of a rebuild namespace (docs/design.md#rebuild-namespaces): the same
 * source topic, incarnation and configuration (the newest revision the manifest carries, as
 * the rebuild's revision 1), only another namespace. Everything that is
 * per namespace follows from that name (consumer group `amends.<ns>.source`, frontiers,
 * epochs, decisions, outputs), so a new name is a new, empty processing state from offset 0.
 */
import { usageError } from '../kernel/amends-error.js';
import { type Manifest, parseManifest } from './config.js';
import { newestConfigOf } from './config-revision.js';

/** `namespace` must already satisfy the namespace rule (the whole manifest is checked again). */
export function rebuildManifest(original: Manifest, namespace: string): Manifest {
  if (namespace === original.config.namespace) {
    throw usageError(`--namespace ${namespace} is the manifest's own namespace: a rebuild needs a new namespace`);
  }
  // The newest configuration the manifest carries (config-revise): a rebuild decides the whole
  // history under it from offset 0, its revision 1. Validated again as a whole.
  const config = newestConfigOf(original);
  return parseManifest({ source_topic: original.source_topic, config: { ...config, namespace } });
}
