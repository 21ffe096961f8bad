/**
 * `amendsctl simulate --manifest M --file F` (docs/design.md#commands): offline, no broker and no database.
 * Runs the worker's incremental engine over the file's records and prints all decision
 * lines, then all output lines, in export's canonical order and format.
 */
import { configAt, latestConfig, manifestChain } from '../../domain/config-revision.js';
import { decide } from '../../domain/decide.js';
import type { Decision } from '../../domain/decision.js';
import { decisionLine, outputLine, sortDecisions, sortOutputVersions } from '../../domain/export-lines.js';
import type { LedgerState } from '../../domain/ledger-state.js';
import type { OutputVersion } from '../../domain/output-version.js';
import { parseSimulationInput } from '../../domain/simulation-input.js';
import { defineCommand } from '../command.js';
import { readInputText, readManifestFile } from '../input-files.js';

export const simulateCommand = defineCommand({
  name: 'simulate',
  summary: 'offline: the decisions and outputs the worker would commit for a file (no broker, no database)',
  help: `simulate --manifest M --file F

  Decides every record of F with the namespace configuration of manifest M, exactly as
  the worker would (when M carries revisions, as config-revise and manifest-recover print
  it, each record under the revision in force at its offset), and prints JSON Lines:
  every decision ordered by (partition, offset), then every output version ordered by
  (item, location, day, version). The lines are
  byte for byte what \`amendsctl export --what decisions\` and \`--what outputs\` print.

  F holds one record per line, in either form (they may be mixed):
    fixture line  {"key":{"item":…,"location":…},"value":{…envelope…}}
                  encoded as source-load publishes it, routed by the newest revision,
                  offsets counted per partition from 0 (after any earlier record there)
    raw record    {"partition":P,"offset":O,"key_b64":"…"|null,"value_b64":"…"|null}
                  exact bytes as standard base64; offsets must increase per partition

  Flags
    --manifest M  the namespace manifest printed by source-create (required)
    --file F      the records to decide (required)

  Example
    $ cat fixtures/before.jsonl fixtures/correction.jsonl > /tmp/records.jsonl
    $ amendsctl simulate --manifest manifest.json --file /tmp/records.jsonl`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    file: { type: 'string', isRequired: true },
  },
  async run(cli, io) {
    const manifest = await readManifestFile(cli.flags.manifest);
    const chain = manifestChain(manifest);
    const records = parseSimulationInput(await readInputText(cli.flags.file, 'file'), latestConfig(chain));
    const state: LedgerState = new Map();
    const decisions: Decision[] = [];
    const versions: OutputVersion[] = [];
    for (const record of records) {
      const result = decide(record, configAt(chain, record.partition, record.offset), state);
      decisions.push(result.decision);
      versions.push(...result.newVersions);
    }
    const lines = [...sortDecisions(decisions).map(decisionLine), ...sortOutputVersions(versions).map(outputLine)];
    if (lines.length > 0) io.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
});
