/**
 * `amendsctl export --manifest M --what decisions|outputs|view|quarantine|revisions`
 * (docs/design.md#export): JSON Lines in canonical order, byte for byte the format `simulate` prints, so runs
 * compare with diff. `view` is what `amends view` holds: the highest version per
 * (item, location, day), retractions included (none before the view has run). `revisions` is
 * the configuration's chain as the database holds it (config-revise), revision 1 first.
 */

import type { NamespaceConfig } from '../../domain/config.js';
import { withPooledClient } from '../../io/store/pooled-client.js';
import { databaseUrlFrom, type Queryable } from '../../io/store/postgres.js';
import { openRegisteredNamespace } from '../../io/store/read-only-namespace.js';
import { exportRevisionLines } from '../../io/store/revision-registry.js';
import { exportViewLines } from '../../io/transport/view-queries.js';
import { usageError } from '../../kernel/amends-error.js';
import {
  exportDecisionLines,
  exportOutputLines,
  exportQuarantineLines,
  keyOrderSessionSql,
} from '../../verify/export-queries.js';
import { defineCommand } from '../command.js';
import { refuseArguments } from '../flag-check.js';
import { readManifestFile } from '../input-files.js';

/** The registered revision 1 (the manifest's config, checked by digest) names the namespace. */
type Exporter = (db: Queryable, config: NamespaceConfig) => AsyncIterable<string>;

const exporters = {
  decisions: (db, config) => exportDecisionLines(db, config.namespace),
  outputs: (db, config) => exportOutputLines(db, config.namespace),
  view: (db, config) => exportViewLines(db, config.namespace),
  quarantine: (db, config) => exportQuarantineLines(db, config.namespace),
  revisions: exportRevisionLines,
} as const satisfies Record<string, Exporter>;
type What = keyof typeof exporters;

export const exportCommand = defineCommand({
  name: 'export',
  summary: 'print decisions, outputs, the view, quarantine or config revisions as canonical JSON Lines',
  help: `export --manifest M --what decisions|outputs|view|quarantine|revisions

  Prints one JSON object per line in canonical order: decisions by (partition, offset),
  output versions by (item, location, day, version), the view (\`amends view\`: the
  highest version per (item, location, day), retractions included) by (item, location,
  day), quarantine by (partition, offset) with the raw key and value bytes in base64. Decision and output lines are byte for byte
  what \`amendsctl simulate\` prints for the same records.

  revisions prints the configuration revisions the database holds (config-revise), one
  line each, revision 1 (the manifest's config, in force from offset 0) first: its number,
  the offset per partition it is in force from, its digest and its config as canonical
  JSON. The chain is read from the database, so a manifest saved before a revision shows it too.

  Needs AMENDS_DATABASE_URL and a namespace registered there (by amends worker or
  amendsctl source-load): export only reads.

  Flags
    --manifest M   the namespace's manifest (required)
    --what W       decisions, outputs, view, quarantine or revisions (required)

  Example
    $ amendsctl export --manifest manifest.json --what outputs > outputs.jsonl`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    what: { type: 'string', isRequired: true },
  },
  async run(cli, io) {
    const what = cli.flags.what as string;
    if (!(what in exporters)) {
      throw usageError(`--what must be one of ${Object.keys(exporters).join(', ')}, got ${JSON.stringify(what)}`);
    }
    refuseArguments(cli.input);
    const databaseUrl = databaseUrlFrom(io.env);
    const manifest = await readManifestFile(cli.flags.manifest as string);
    // Read-only: an unregistered namespace is refused, never registered; a manifest whose
    // digest differs from the registered one is refused too (docs/design.md#manifest).
    const db = await openRegisteredNamespace(databaseUrl, manifest, 'amendsctl export');
    try {
      await withPooledClient(db.pool, async (client) => {
        await client.query(keyOrderSessionSql);
        let chunk = '';
        for await (const line of exporters[what as What](client, manifest.config)) {
          chunk += `${line}\n`;
          if (chunk.length > 1 << 16) {
            if (!io.stdout.write(chunk)) await new Promise((r) => io.stdout.once('drain', r));
            chunk = '';
          }
        }
        io.stdout.write(chunk);
      });
    } finally {
      await db.close();
    }
    return 0;
  },
});
