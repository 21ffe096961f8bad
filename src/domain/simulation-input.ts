/**
 * The input of `amendsctl simulate` (docs/design.md#commands): a JSON Lines file mixing fixture lines
 * (fixture-line.ts) and raw record lines (raw-record-line.ts), turned into source records.
 *
 * Offsets: a raw record states its own offset, which must be greater than the previous
 * record of its partition (gaps are allowed, as aborted transactions leave them on a real
 * broker). A fixture line takes the next offset of its mapped partition: the previous
 * record's offset + 1, or 0 for the partition's first record. So a file of fixture lines
 * alone numbers each partition 0, 1, 2, … exactly as a fresh topic would.
 */

import { invalidInput } from '../kernel/amends-error.js';
import type { NamespaceConfig } from './config.js';
import { encodeFixtureNode, fixtureLineDepthMax } from './fixture-line.js';
import { splitInputLines } from './input-lines.js';
import { rawRecordFromNode } from './raw-record-line.js';
import type { SourceRecord } from './source-record.js';
import { parseStrictJsonText } from './strict-json.js';

export interface SimulationRecord extends SourceRecord {
  /** The input line it came from. */
  line: number;
}

export function parseSimulationInput(text: string, config: NamespaceConfig): SimulationRecord[] {
  const lastOffsets = new Map<number, number>();
  const records: SimulationRecord[] = [];
  for (const { line, text: lineText } of splitInputLines(text)) {
    const parsed = parseStrictJsonText(lineText, { depthMax: fixtureLineDepthMax });
    if (!parsed.ok) throw invalidInput(`line ${line}: not strict JSON: ${parsed.detail}`);
    const root = parsed.value;
    const isFixture = root.type === 'object' && (root.members.has('key') || root.members.has('value'));
    const isRaw = root.type === 'object' && root.members.has('partition');
    if (isFixture === isRaw) {
      throw invalidInput(
        `line ${line}: neither a fixture line {"key","value"} nor a raw record {"partition","offset","key_b64","value_b64"}`,
      );
    }
    let record: SimulationRecord;
    if (isFixture) {
      const encoded = encodeFixtureNode(root, line, config);
      const last = lastOffsets.get(encoded.partition);
      const offset = last === undefined ? 0 : last + 1;
      record = { line, partition: encoded.partition, offset, key: encoded.key, value: encoded.value };
    } else {
      const raw = rawRecordFromNode(root, line, config);
      const last = lastOffsets.get(raw.partition);
      if (last !== undefined && raw.offset <= last) {
        throw invalidInput(
          `line ${line}: offset ${raw.offset} on partition ${raw.partition} must be greater than the previous ${last}`,
        );
      }
      record = raw;
    }
    lastOffsets.set(record.partition, record.offset);
    records.push(record);
  }
  return records;
}
