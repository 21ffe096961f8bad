/**
 * `amendsctl balances --manifest M [--item I] [--location L] [--from D] [--to D]
 * [--as-of P:O | --as-of-time T] [--format table|jsonl|csv]` (docs/design.md#balances, issue 36):
 * the closing balance of every active day in the range as of a bound, by (item, location, day),
 * streamed in keyset pages of the read API's `balances_as_of` (balance-pages.ts): memory for one
 * page, whatever the ledger's length.
 */
import { isCalendarDate } from '../../domain/text-rules.js';
import { resolveAsOf } from '../../io/store/as-of-bound.js';
import { type BalanceRow, readBalances } from '../../io/store/balance-pages.js';
import { withPooledClient } from '../../io/store/pooled-client.js';
import { databaseUrlFrom, describeDatabaseError } from '../../io/store/postgres.js';
import { apiSchemaFor } from '../../io/store/read-api-schema.js';
import { openRegisteredNamespace } from '../../io/store/read-only-namespace.js';
import { usageError } from '../../kernel/amends-error.js';
import { keyOrderSessionSql } from '../../verify/export-queries.js';
import { asOfFlags, asOfFlagsHelp, asOfRequest } from '../as-of-flags.js';
import { type BalanceFormat, balanceFormats, balanceWriter } from '../balance-formats.js';
import { defineCommand } from '../command.js';
import { refuseArguments } from '../flag-check.js';
import { readManifestFile } from '../input-files.js';

/** Rows the table waits for before it fixes its column widths. */
const tableWidthRows = 1_000;
/** Bytes gathered before a write to stdout. */
const writeChunkBytes = 1 << 16;

export const balancesCommand = defineCommand({
  name: 'balances',
  summary: 'print the closing balances of every active day, now or as of a position or time',
  help: `balances --manifest M [--item I] [--location L] [--from D] [--to D] [--as-of P:O | --as-of-time T] [--format table|jsonl|csv]

  Prints the closing balance of every active day (a day with posts) of the namespace's stock
  keys, by item, location and day: closing, status, version and the source position of the
  decision that caused it. --item, --location, --from and --to (days, inclusive) narrow it.

  As of now by default: everything decided when the command starts. --as-of answers as of a
  source position (partition P up to and including offset O), --as-of-time as of the
  decisions committed at or before a time: each day's latest version then, retracted days
  left out. Streams in pages, so any ledger prints in bounded memory. Reads only, through the
  SQL read API (docs/design.md#sql-read-api); needs AMENDS_DATABASE_URL and a registered
  namespace. A position beyond a partition's frontier is one line, exit 1.

  Formats: table (for people), jsonl (one JSON object per line:
  {"item","location","day","closing","status","version","cause":{"partition","offset"}}),
  csv (a header line, then RFC 4180 rows, for spreadsheets).

  Flags
    --manifest M      the namespace's manifest (required)
    --item I          only this item
    --location L      only this location
    --from D          only days on or after D (YYYY-MM-DD)
    --to D            only days on or before D (YYYY-MM-DD)
${asOfFlagsHelp(18)}
    --format F        table (default), jsonl or csv

  Example
    $ amendsctl balances --manifest manifest.json --item widget --from 2026-03-01 --to 2026-03-31 --format csv`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    item: { type: 'string' },
    location: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    ...asOfFlags,
    format: { type: 'string', default: 'table' },
  },
  async run(cli, io) {
    const flags = cli.flags as Record<string, string | undefined>;
    const format = flags.format as string;
    if (!(balanceFormats as readonly string[]).includes(format)) {
      throw usageError(`--format must be one of ${balanceFormats.join(', ')}, got ${JSON.stringify(format)}`);
    }
    for (const name of ['from', 'to'] as const) {
      const day = flags[name];
      if (day !== undefined && !isCalendarDate(day)) {
        throw usageError(`--${name} ${JSON.stringify(day)} is not a calendar date YYYY-MM-DD`);
      }
    }
    if (flags.from !== undefined && flags.to !== undefined && flags.from > flags.to) {
      throw usageError(`--from ${flags.from} is after --to ${flags.to}`);
    }
    const request = asOfRequest(cli.flags);
    refuseArguments(cli.input);
    const databaseUrl = databaseUrlFrom(io.env);
    const manifest = await readManifestFile(flags.manifest as string);
    const namespace = manifest.config.namespace;
    const filter = {
      item: flags.item ?? null,
      location: flags.location ?? null,
      from: flags.from ?? null,
      to: flags.to ?? null,
    };
    const db = await openRegisteredNamespace(databaseUrl, manifest, 'amendsctl balances');
    try {
      await withPooledClient(db.pool, async (client) => {
        // No page read needs a sort, whatever the statistics say (export-queries.ts, issue 34).
        await client.query(keyOrderSessionSql);
        const api = apiSchemaFor(databaseUrl);
        const { through } = await resolveAsOf(client, api, namespace, request);
        await writeBalances(io.stdout, format as BalanceFormat, readBalances(client, api, namespace, filter, through));
      }).catch((error: unknown) => {
        throw describeDatabaseError(error, databaseUrl, `reading the balances of namespace ${namespace}`);
      });
    } finally {
      await db.close();
    }
    return 0;
  },
});

/** Writes every row in `format`, gathering chunks and waiting for stdout to drain between them. */
async function writeBalances(
  stdout: NodeJS.WritableStream,
  format: BalanceFormat,
  rows: AsyncIterable<BalanceRow>,
): Promise<void> {
  const writer = balanceWriter(format);
  let chunk = '';
  const flush = async () => {
    if (!stdout.write(chunk)) await new Promise((resolve) => stdout.once('drain', resolve));
    chunk = '';
  };
  const first: BalanceRow[] = [];
  let headed = false;
  for await (const row of rows) {
    if (!headed) {
      first.push(row);
      if (first.length < tableWidthRows) continue;
      chunk += writer.header(first) + first.map(writer.line).join('');
      headed = true;
      continue;
    }
    chunk += writer.line(row);
    if (chunk.length > writeChunkBytes) await flush();
  }
  if (!headed) chunk += writer.header(first) + first.map(writer.line).join('');
  await flush();
}
