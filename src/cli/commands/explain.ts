/**
 * `amendsctl explain --manifest M --item I --location L --day D [--as-of P:O | --as-of-time T]
 * [--envelopes] [--json]` (docs/design.md#explain, issue 36): why a day's closing is what it is.
 * Everything is read through the SQL read API in one read-only snapshot, so what it prints is
 * what a BI tool reading `contributions_as_of` and `versions_as_of` sees.
 *
 * One line and exit 1 for: a key that is not a stock key of the namespace, a day that never had
 * a balance (no transaction ever posted on it), a day that had none yet at the bound, and a
 * position beyond a frontier (as-of-bound.ts).
 */
import { latestConfig } from '../../domain/config-revision.js';
import { stockKeyTerms } from '../../domain/stock-key-terms.js';
import { isCalendarDate } from '../../domain/text-rules.js';
import type { ExplainRead } from '../../io/store/explain-read.js';
import { readExplanation } from '../../io/store/explain-read.js';
import { withPooledClient } from '../../io/store/pooled-client.js';
import { databaseUrlFrom, describeDatabaseError } from '../../io/store/postgres.js';
import { apiSchemaFor } from '../../io/store/read-api-schema.js';
import { openRegisteredNamespace } from '../../io/store/read-only-namespace.js';
import { readRevisions } from '../../io/store/revision-registry.js';
import { invalidInput, usageError } from '../../kernel/amends-error.js';
import { asOfFlags, asOfFlagsHelp, asOfRequest } from '../as-of-flags.js';
import { defineCommand } from '../command.js';
import { explanationDocument, renderExplanation } from '../explain-report.js';
import { refuseArguments } from '../flag-check.js';
import { readManifestFile } from '../input-files.js';

export const explainCommand = defineCommand({
  name: 'explain',
  summary: "show why a day's closing is what it is: its transactions and its versions",
  help: `explain --manifest M --item I --location L --day D [--as-of P:O | --as-of-time T] [--envelopes] [--json]

  Decomposes the closing balance of (I, L) on day D into the key's opening plus each
  transaction that makes it up: its txn, authoritative revision, qty, day, the source
  partition and offset of that revision and when it was decided. They sum exactly to the
  closing. Then the day's version history: each version's closing, status, whether it is a
  retraction, and the decision that caused it (source coordinates, outcome, txn, revision).

  As of now by default: everything decided when the command starts. --as-of answers as of a
  source position (partition P up to and including offset O), --as-of-time as of the
  decisions committed at or before a time. Reads only, through the SQL read API
  (docs/design.md#sql-read-api); needs AMENDS_DATABASE_URL and a registered namespace.

  A key that is not a stock key of the namespace, a day that never had a balance (no
  transaction was ever posted on it), a day without a balance yet at the bound, and a
  position beyond a partition's frontier are each one line, exit 1.

  Flags
    --manifest M      the namespace's manifest (required)
    --item I          the stock key's item (required)
    --location L      the stock key's location (required)
    --day D           the day, YYYY-MM-DD (required)
${asOfFlagsHelp(18)}
    --envelopes       each transaction's raw key and envelope too (JSON: base64; text: the envelope)
    --json            one JSON document instead of text

  Example
    $ amendsctl explain --manifest manifest.json --item widget --location berlin --day 2026-03-05 --as-of 0:7`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    item: { type: 'string', isRequired: true },
    location: { type: 'string', isRequired: true },
    day: { type: 'string', isRequired: true },
    ...asOfFlags,
    envelopes: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
  async run(cli, io) {
    const { item, location, day } = cli.flags as { item: string; location: string; day: string };
    if (!isCalendarDate(day)) throw usageError(`--day ${JSON.stringify(day)} is not a calendar date YYYY-MM-DD`);
    const request = asOfRequest(cli.flags);
    refuseArguments(cli.input);
    const databaseUrl = databaseUrlFrom(io.env);
    const manifest = await readManifestFile(cli.flags.manifest as string);
    const namespace = manifest.config.namespace;
    const db = await openRegisteredNamespace(databaseUrl, manifest, 'amendsctl explain');
    let input: ExplainRead;
    try {
      const config = latestConfig({
        base: manifest.config,
        revisions: await readRevisions(db.pool, manifest.config),
      });
      const terms = stockKeyTerms(config, item, location);
      if (terms === undefined) {
        throw invalidInput(
          `${item}@${location} is not a stock key of namespace ${namespace}: check --item and --location (amendsctl export --what revisions shows the configuration)`,
        );
      }
      const key = { namespace, item, location, day };
      const api = apiSchemaFor(databaseUrl);
      input = await withPooledClient(db.pool, (client) =>
        readExplanation(client, api, key, terms.opening, request),
      ).catch((error: unknown) => {
        throw describeDatabaseError(error, databaseUrl, `explaining ${item}@${location} ${day}`);
      });
    } finally {
      await db.close();
    }
    const document = explanationDocument({ ...input, envelopes: cli.flags.envelopes as boolean });
    io.stdout.write(cli.flags.json ? `${JSON.stringify(document)}\n` : renderExplanation(document));
    return 0;
  },
});
