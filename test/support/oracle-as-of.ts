/**
 * What the independent oracle says as of a bound (issue 36 item 5), for holding `balances` and
 * `explain` against it: the oracle (fast-oracle-run.ts) judges the whole history once, and its
 * versions and decisions are cut at the bound here, by their own source coordinates, never by
 * anything the store holds.
 *
 * - balances as of a bound: per (item, location, day), the last version whose cause is at or
 *   below its partition's bound, unless that is a retraction;
 * - contributions as of a bound: per transaction of the key, its last APPLIED record at or below
 *   the bound, read from the record's own bytes; those that post on the day or before.
 */
import type { Decision } from '../../src/domain/decision.js';
import type { OutputVersion } from '../../src/domain/output-version.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import type { BalanceRow } from '../../src/io/store/balance-pages.js';

const included = (through: readonly number[], c: { partition: number; offset: number }) =>
  c.offset <= (through[c.partition] ?? Number.POSITIVE_INFINITY);

/** The oracle's day versions (by item, location, day, version) cut at the bound, oldest first. */
export function versionsAsOf(
  versions: readonly OutputVersion[],
  key: { item: string; location: string; day: string },
  through: readonly number[],
): OutputVersion[] {
  return versions.filter(
    (v) => v.item === key.item && v.location === key.location && v.day === key.day && included(through, v.cause),
  );
}

/** Every active day's balance as of the bound, in the versions' order (item, location, day by code point). */
export function balancesAsOf(versions: readonly OutputVersion[], through: readonly number[]): BalanceRow[] {
  const latest = new Map<string, OutputVersion>();
  for (const v of versions) {
    if (included(through, v.cause)) latest.set(JSON.stringify([v.item, v.location, v.day]), v);
  }
  return [...latest.values()]
    .filter((v) => !v.retracted)
    .map((v) => ({
      item: v.item,
      location: v.location,
      day: v.day,
      version: v.version,
      closing: v.closing as number,
      status: v.status as string,
      cause: v.cause,
    }));
}

export interface ExpectedContribution {
  txn: string;
  rev: number;
  day: string;
  qty: number;
  source: { partition: number; offset: number };
}

/**
 * The key's transactions as of the bound that post on `day` or before, by (day, partition, offset).
 * `decisions` are the oracle's, aligned with `records` by (partition, offset).
 */
export function contributionsAsOf(
  records: readonly SourceRecord[],
  decisions: readonly Decision[],
  key: { item: string; location: string; day: string },
  through: readonly number[],
): ExpectedContribution[] {
  const outcome = new Map(decisions.map((d) => [`${d.partition}:${d.offset}`, d]));
  const last = new Map<string, { envelope: Record<string, unknown>; source: { partition: number; offset: number } }>();
  for (const r of records) {
    const d = outcome.get(`${r.partition}:${r.offset}`);
    if (d?.outcome !== 'APPLIED' || d.item !== key.item || d.location !== key.location) continue;
    if (!included(through, r)) continue;
    // An APPLIED envelope is strict JSON, so JSON.parse reads it as the oracle's decoder did.
    const envelope = JSON.parse(Buffer.from(r.value as Uint8Array).toString('utf8')) as Record<string, unknown>;
    last.set(d.txn as string, { envelope, source: { partition: r.partition, offset: r.offset } });
  }
  return [...last.entries()]
    .filter(([, { envelope }]) => envelope.op === 'post' && (envelope.day as string) <= key.day)
    .map(([txn, { envelope, source }]) => ({
      txn,
      rev: envelope.rev as number,
      day: envelope.day as string,
      // -0 is 0 (docs/design.md#envelope).
      qty: (envelope.qty as number) + 0,
      source,
    }))
    .sort((a, b) =>
      a.day === b.day
        ? a.source.partition - b.source.partition || a.source.offset - b.source.offset
        : a.day < b.day
          ? -1
          : 1,
    );
}
