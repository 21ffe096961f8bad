/**
 * The manifest of a rebuild namespace (docs/design.md#rebuild-namespaces): the same
 * source topic, incarnation and configuration, only another namespace. Everything that is
 * per namespace follows from that name (consumer group `amends.<ns>.source`, frontiers,
 * epochs, decisions, outputs), so a new name is a new, empty processing state from offset 0.
 */
import { usageError } from '../kernel/amends-error.js';
import { type Manifest, parseManifest } from './config.js';

/** `namespace` must already satisfy the namespace rule (the whole manifest is checked again). */
export function rebuildManifest(original: Manifest, namespace: string): Manifest {
  if (namespace === original.config.namespace) {
    throw usageError(`--namespace ${namespace} is the manifest's own namespace: a rebuild needs a new namespace`);
  }
  // Validated again as a whole: the same checks every later reader of the manifest applies.
  return parseManifest({ source_topic: original.source_topic, config: { ...original.config, namespace } });
}
