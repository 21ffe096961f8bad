/**
 * The manifest as a person saves it (docs/design.md#manifest): pretty-printed JSON (2-space indent) and
 * a final newline, members in docs/design.md#configuration's order. The order is written out member by
 * member, not taken from the object: a manifest rebuilt from PostgreSQL's jsonb (which
 * reorders members) or from a config file with its own member order must print byte for
 * byte like the one source-create printed. The digest never depends on this layout: it is
 * computed over the canonical JSON of `config`.
 */
import type { Manifest } from './config.js';

export function manifestText(manifest: Manifest): string {
  const { config } = manifest;
  const ordered = {
    source_topic: manifest.source_topic,
    config: {
      namespace: config.namespace,
      schema_version: config.schema_version,
      ledger_origin: config.ledger_origin,
      partitions: config.partitions,
      stock_keys: config.stock_keys.map((key) => ({
        item: key.item,
        location: key.location,
        partition: key.partition,
        opening: key.opening,
        threshold: key.threshold,
      })),
      source_incarnation: config.source_incarnation,
    },
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}
