/**
 * The manifest as a person saves it (docs/design.md#manifest): pretty-printed JSON (2-space indent) and
 * a final newline, members in docs/design.md#configuration's order. The order is written out member by
 * member, not taken from the object: a manifest rebuilt from PostgreSQL's jsonb (which
 * reorders members) or from a config file with its own member order must print byte for
 * byte like the one source-create printed. The digest never depends on this layout: it is
 * computed over the canonical JSON of `config`.
 */
import type { Manifest, NamespaceConfig } from './config.js';

export function manifestText(manifest: Manifest): string {
  const ordered = {
    source_topic: manifest.source_topic,
    config: orderedConfig(manifest.config),
    // Revisions 2… (config-revise); undefined leaves the member out, so an unrevised manifest prints as before.
    revisions: manifest.revisions?.map((r) => ({
      revision: r.revision,
      from: r.from,
      config: orderedConfig(r.config),
      digest: r.digest,
    })),
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

function orderedConfig(config: NamespaceConfig) {
  return {
    namespace: config.namespace,
    schema_version: config.schema_version,
    ledger_origin: config.ledger_origin,
    partitions: config.partitions,
    // Version 2's members; undefined leaves a member out, so a version 1 manifest prints as before.
    partitioner: config.schema_version === 2 ? config.partitioner : undefined,
    default_stock_key: defaultRuleOf(config),
    stock_keys: config.stock_keys.map((key) => ({
      item: key.item,
      location: key.location,
      partition: 'partition' in key ? key.partition : undefined,
      opening: key.opening,
      threshold: key.threshold,
    })),
    source_incarnation: config.source_incarnation,
  };
}

/** The default rule as written: absent stays absent and null stays null (the digest sees what is written). */
function defaultRuleOf(config: NamespaceConfig) {
  if (config.schema_version === 1 || config.default_stock_key === undefined) return undefined;
  const rule = config.default_stock_key;
  return rule === null ? null : { opening: rule.opening, threshold: rule.threshold };
}
