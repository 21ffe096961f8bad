/**
 * What the frozen writers of older schemas (store-v4-writer.ts, store-v5-writer.ts) share:
 * their claim, and the first 35 parameters of their batch statements, which both builds
 * filled alike (decisions, authority, output versions with their outbox records, counts,
 * notify). Each writer appends its own day-row parameters. Test-only.
 */
import type pg from 'pg';
import { type NamespaceConfig, stockKeyId } from '../../src/domain/config.js';
import type { DecideResult } from '../../src/domain/decide.js';
import type { Outcome } from '../../src/domain/decision.js';
import { outputRecordKey, outputRecordValue } from '../../src/domain/export-lines.js';
import type { SourceRecord } from '../../src/domain/source-record.js';

/** The old builds' claim (unchanged up to schema 5): returns the new epoch and the frontier. */
export async function claimAsOldBuild(
  client: pg.ClientBase,
  namespace: string,
  partition: number,
  owner: string,
): Promise<{ epoch: number; frontier: number }> {
  const claimed = await client.query(
    `INSERT INTO partitions AS p (namespace, partition, epoch, owner) VALUES ($1, $2, 1, $3)
     ON CONFLICT (namespace, partition) DO UPDATE SET epoch = p.epoch + 1 RETURNING epoch, frontier`,
    [namespace, partition, owner],
  );
  return { epoch: Number(claimed.rows[0].epoch), frontier: Number(claimed.rows[0].frontier) };
}

/** $1–$35 of the schema-4 and schema-5 batch statements, from the engine's results for `records`. */
export function oldBatchValues(
  config: NamespaceConfig,
  partition: number,
  epoch: number,
  expected: number,
  frontier: number,
  records: readonly SourceRecord[],
  results: readonly DecideResult[],
): unknown[] {
  const counts: Partial<Record<Outcome, number>> = {};
  const authority = new Map<
    string,
    {
      item: string;
      location: string;
      txn: string;
      rev: number;
      op: string;
      day: string | null;
      qty: number | null;
      cause: number;
    }
  >();
  const versions = results.flatMap((r) => r.newVersions);
  results.forEach(({ decision, authorityChange }) => {
    counts[decision.outcome] = (counts[decision.outcome] ?? 0) + 1;
    if (authorityChange === null || decision.item === null || decision.location === null) return;
    authority.set(stockKeyId(decision.item, decision.location) + authorityChange.txn, {
      item: decision.item,
      location: decision.location,
      txn: authorityChange.txn,
      ...authorityChange.entry,
      cause: decision.offset,
    });
  });
  const changes = [...authority.values()];
  const decisions = results.map((r) => r.decision);
  return [
    config.namespace,
    partition,
    epoch,
    expected,
    frontier,
    decisions.map((d) => d.offset),
    decisions.map((d) => d.outcome),
    decisions.map((d) => d.item),
    decisions.map((d) => d.location),
    decisions.map((d) => d.txn),
    decisions.map((d) => d.rev),
    records.map((r) => r.key),
    records.map((r) => r.value),
    decisions.map((d) => d.quarantined),
    decisions.map((d) => (d.detail === null ? null : d.detail.replaceAll('\u0000', '\\u0000'))),
    changes.map((c) => c.item),
    changes.map((c) => c.location),
    changes.map((c) => c.txn),
    changes.map((c) => c.rev),
    changes.map((c) => c.op),
    changes.map((c) => c.day),
    changes.map((c) => c.qty),
    changes.map((c) => c.cause),
    versions.map((v) => v.item),
    versions.map((v) => v.location),
    versions.map((v) => v.day),
    versions.map((v) => v.version),
    versions.map((v) => v.closing),
    versions.map((v) => v.status),
    versions.map((v) => v.retracted),
    versions.map((v) => v.cause.offset),
    versions.map((v) => Buffer.from(outputRecordKey(v), 'utf8')),
    versions.map((v) => Buffer.from(outputRecordValue(v, config.namespace), 'utf8')),
    JSON.stringify(counts),
    versions.length > 0,
  ];
}
