/**
 * What `amendsctl export` printed under schema version 5 (before migration 0006), frozen so
 * the upgrade test can compare this build's export with it byte for byte: that build's
 * queries (git 24dc473, src/io/export-queries.ts), without the keyset paging (a test's
 * namespace fits one page), rendered by the line functions of src/domain/export-lines.ts,
 * which are unchanged since. Test-only: nothing in src may use it.
 */
import type pg from 'pg';
import type { Decision, Outcome } from '../../src/domain/decision.js';
import { decisionLine, outputLine, quarantineLine } from '../../src/domain/export-lines.js';
import type { BalanceStatus } from '../../src/domain/output-version.js';

export type ExportWhat = 'decisions' | 'outputs' | 'quarantine';

const decisionColumns = 'partition, record_offset, outcome, item, location, txn, rev, quarantined, detail';

/** The lines of `export --what <what>` as the schema-5 build printed them, each ending in a newline. */
export async function exportAsSchemaV5(client: pg.ClientBase, namespace: string, what: ExportWhat): Promise<string> {
  const lines: string[] = [];
  if (what === 'outputs') {
    const { rows } = await client.query(
      `SELECT item, location, day, version, closing, status, retracted, cause_partition, cause_offset
         FROM output_versions
        WHERE namespace = $1
        ORDER BY item, location, day, version`,
      [namespace],
    );
    for (const r of rows) {
      lines.push(
        outputLine({
          item: r.item,
          location: r.location,
          day: r.day,
          version: r.version,
          closing: r.closing === null ? null : Number(r.closing),
          status: r.status as BalanceStatus | null,
          retracted: r.retracted,
          cause: { partition: r.cause_partition, offset: Number(r.cause_offset) },
        }),
      );
    }
  } else {
    const { rows } = await client.query(
      `SELECT ${decisionColumns}, raw_key, raw_value FROM decisions
        WHERE namespace = $1${what === 'quarantine' ? ' AND quarantined' : ''}
        ORDER BY partition, record_offset`,
      [namespace],
    );
    for (const r of rows) {
      const decision: Decision = {
        partition: r.partition,
        offset: Number(r.record_offset),
        outcome: r.outcome as Outcome,
        item: r.item,
        location: r.location,
        txn: r.txn,
        rev: r.rev,
        quarantined: r.quarantined,
        detail: r.detail,
      };
      lines.push(
        what === 'decisions'
          ? decisionLine(decision)
          : quarantineLine(decision, { key: r.raw_key, value: r.raw_value }),
      );
    }
  }
  return lines.map((l) => `${l}\n`).join('');
}
