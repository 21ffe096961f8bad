/**
 * `amendsctl export --manifest M --what decisions|outputs|view|quarantine`
 * (docs/design.md#export): JSON Lines in canonical order, byte for byte the format `simulate` prints, so runs
 * compare with diff. `view` is what `amends view` holds: the highest version per
 * (item, location, day), retractions included (none before the view has run).
 */

import { databaseUrlFrom } from '../../io/store/postgres.js';
import { exportViewLines } from '../../io/transport/view-queries.js';
import { usageError } from '../../kernel/amends-error.js';
import { exportDecisionLines, exportOutputLines, exportQuarantineLines } from '../../verify/export-queries.js';
import { defineCommand } from '../command.js';
import { refuseArguments } from '../flag-check.js';
import { readManifestFile } from '../input-files.js';
import { openRegisteredNamespace } from '../read-only-namespace.js';

const exporters = {
  decisions: exportDecisionLines,
  outputs: exportOutputLines,
  view: exportViewLines,
  quarantine: exportQuarantineLines,
} as const;
type What = keyof typeof exporters;

export const exportCommand = defineCommand({
  name: 'export',
  summary: 'print decisions, output versions, the view or quarantine as canonical JSON Lines',
  help: `export --manifest M --what decisions|outputs|view|quarantine

  Prints one JSON object per line in canonical order: decisions by (partition, offset),
  output versions by (item, location, day, version), the view (\`amends view\`: the
  highest version per (item, location, day), retractions included) by (item, location,
  day), quarantine by (partition, offset) with the raw key and value bytes in base64. Decision and output lines are byte for byte
  what \`amendsctl simulate\` prints for the same records. Needs AMENDS_DATABASE_URL and
  a namespace registered there (by amends worker or amendsctl source-load): export only reads.

  Flags
    --manifest M   the namespace's manifest (required)
    --what W       decisions, outputs, view or quarantine (required)

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
    const namespace = manifest.config.namespace;
    // Read-only: an unregistered namespace is refused, never registered; a manifest whose
    // digest differs from the registered one is refused too (docs/design.md#manifest).
    const db = await openRegisteredNamespace(databaseUrl, manifest, 'amendsctl export');
    try {
      const lines = exporters[what as What](db.pool, namespace);
      let chunk = '';
      for await (const line of lines) {
        chunk += `${line}\n`;
        if (chunk.length > 1 << 16) {
          if (!io.stdout.write(chunk)) await new Promise((r) => io.stdout.once('drain', r));
          chunk = '';
        }
      }
      io.stdout.write(chunk);
    } finally {
      await db.close();
    }
    return 0;
  },
});
