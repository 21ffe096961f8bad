/**
 * The parameters of the batch commit (sql/commit-batch.ts `commitBatchSql`), built in memory and
 * without I/O: one column per `unnest` argument, in the statement's numbering. The records'
 * decisions, the authority they change, the output versions with their outbox envelopes, the
 * day rows the batch changed and the transactions the window cache took as new.
 *
 * Array parameters go as literals (array-literal.ts): pg's own conversion was a tenth of a
 * batch's CPU.
 */

import { stockKeyId } from '../../domain/config.js';
import type { DecideResult } from '../../domain/decide.js';
import type { Decision, Outcome } from '../../domain/decision.js';
import { outputRecordKey, outputRecordValue } from '../../domain/export-lines.js';
import type { DayRow } from '../../domain/key-window.js';
import type { AuthorityEntry } from '../../domain/ledger-state.js';
import type { BalanceStatus, OutputVersion } from '../../domain/output-version.js';
import { assertInvariant } from '../../kernel/invariant.js';
import type { ProcessRequest, SourceRecord } from '../../machines/ports.js';
import { booleanArray, byteaArray, integerArray, textArray } from './array-literal.js';

/** A day row the batch changed, with its key and the cause of its latest version. */
export interface ChangedDay {
  item: string;
  location: string;
  row: DayRow;
  cause: number;
}

/** A transaction of a stock key. */
export interface TxnRef {
  item: string;
  location: string;
  txn: string;
}

/** What the commit writes besides the decided records, and where. */
export interface CommitBatch {
  namespace: string;
  /** The namespace's id, which keys the per-record tables. */
  nsId: number;
  request: ProcessRequest;
  results: readonly DecideResult[];
  /** The partition's frontier after the batch. */
  frontier: number;
  days: readonly ChangedDay[];
  assumedNew: readonly TxnRef[];
  /** The configuration revision the batch was decided under. */
  revision: number;
  /** The claim of the store's claim of the partition (null: none, so nothing commits). */
  claim: string | null;
}

/** $6–$15: one row per record. */
interface DecisionColumns {
  offsets: number[];
  outcomes: Outcome[];
  items: (string | null)[];
  locations: (string | null)[];
  txns: (string | null)[];
  revs: (number | null)[];
  rawKeys: (Uint8Array | null)[];
  rawValues: (Uint8Array | null)[];
  quarantined: boolean[];
  details: (string | null)[];
}

/** $16–$23: one row per (item, location, txn). */
interface AuthorityChange {
  item: string;
  location: string;
  txn: string;
  entry: AuthorityEntry;
  cause: number;
}

/** $24–$33: one row per new output version, in the order the outbox ids are drawn. */
interface VersionColumns {
  items: string[];
  locations: string[];
  days: string[];
  versions: number[];
  closings: (number | null)[];
  statuses: (BalanceStatus | null)[];
  retracted: boolean[];
  causes: number[];
  recordKeys: Buffer[];
  recordValues: Buffer[];
}

/** Records by outcome, as the batch's last_counts stores them: what the worker's metrics count. */
export function outcomeCounts(results: readonly DecideResult[]): Partial<Record<Outcome, number>> {
  const counts: Partial<Record<Outcome, number>> = {};
  for (const { decision } of results) counts[decision.outcome] = (counts[decision.outcome] ?? 0) + 1;
  return counts;
}

/** `commitBatchSql`'s parameters $1–$50, in order. */
export function commitBatchValues(batch: CommitBatch): unknown[] {
  const { request, results, frontier, days, nsId, assumedNew } = batch;
  const decisions = emptyDecisionColumns(results.length);
  // The last authority change per (item, location, txn) wins: one upsert row per txn.
  const authority = new Map<string, AuthorityChange>();
  const versions = emptyVersionColumns();
  results.forEach(({ decision, newVersions, authorityChange }, i) => {
    setDecision(decisions, i, decision, request.records[i] as SourceRecord);
    if (authorityChange !== null) {
      assertInvariant(decision.item !== null && decision.location !== null, 'an authority change without a key');
      authority.set(stockKeyId(decision.item, decision.location) + authorityChange.txn, {
        item: decision.item,
        location: decision.location,
        txn: authorityChange.txn,
        entry: authorityChange.entry,
        cause: decision.offset,
      });
    }
    for (const v of newVersions) pushVersion(versions, v, batch.namespace);
  });
  return [
    batch.namespace,
    request.partition,
    request.epoch,
    request.expectedFrontier,
    frontier,
    ...decisionValues(decisions),
    ...authorityValues([...authority.values()]),
    ...versionValues(versions),
    JSON.stringify(outcomeCounts(results)),
    versions.items.length > 0,
    ...changedDayValues(days),
    nsId,
    textArray(assumedNew.map((t) => t.item)),
    textArray(assumedNew.map((t) => t.location)),
    textArray(assumedNew.map((t) => t.txn)),
    batch.revision,
    batch.claim,
  ];
}

function emptyDecisionColumns(n: number): DecisionColumns {
  return {
    offsets: new Array(n),
    outcomes: new Array(n),
    items: new Array(n),
    locations: new Array(n),
    txns: new Array(n),
    revs: new Array(n),
    rawKeys: new Array(n),
    rawValues: new Array(n),
    quarantined: new Array(n),
    details: new Array(n),
  };
}

function setDecision(columns: DecisionColumns, i: number, decision: Decision, record: SourceRecord): void {
  assertInvariant(decision.offset === record.offset, `decision ${decision.offset} for record ${record.offset}`);
  columns.offsets[i] = decision.offset;
  columns.outcomes[i] = decision.outcome;
  columns.items[i] = decision.item;
  columns.locations[i] = decision.location;
  columns.txns[i] = decision.txn;
  columns.revs[i] = decision.rev;
  columns.rawKeys[i] = record.key;
  columns.rawValues[i] = record.value;
  columns.quarantined[i] = decision.quarantined;
  // PostgreSQL text cannot hold U+0000; the detail is free text (export compares ignore it).
  columns.details[i] = decision.detail === null ? null : decision.detail.replaceAll('\u0000', '\\u0000');
}

function emptyVersionColumns(): VersionColumns {
  return {
    items: [],
    locations: [],
    days: [],
    versions: [],
    closings: [],
    statuses: [],
    retracted: [],
    causes: [],
    recordKeys: [],
    recordValues: [],
  };
}

function pushVersion(columns: VersionColumns, v: OutputVersion, namespace: string): void {
  columns.items.push(v.item);
  columns.locations.push(v.location);
  columns.days.push(v.day);
  columns.versions.push(v.version);
  columns.closings.push(v.closing);
  columns.statuses.push(v.status);
  columns.retracted.push(v.retracted);
  columns.causes.push(v.cause.offset);
  columns.recordKeys.push(Buffer.from(outputRecordKey(v), 'utf8'));
  columns.recordValues.push(Buffer.from(outputRecordValue(v, namespace), 'utf8'));
}

/** $6–$15. */
function decisionValues(c: DecisionColumns): unknown[] {
  return [
    integerArray(c.offsets),
    textArray(c.outcomes),
    textArray(c.items),
    textArray(c.locations),
    textArray(c.txns),
    integerArray(c.revs),
    byteaArray(c.rawKeys),
    byteaArray(c.rawValues),
    booleanArray(c.quarantined),
    textArray(c.details),
  ];
}

/** $16–$23. */
function authorityValues(changes: readonly AuthorityChange[]): unknown[] {
  return [
    textArray(changes.map((c) => c.item)),
    textArray(changes.map((c) => c.location)),
    textArray(changes.map((c) => c.txn)),
    integerArray(changes.map((c) => c.entry.rev)),
    textArray(changes.map((c) => c.entry.op)),
    textArray(changes.map((c) => c.entry.day)),
    integerArray(changes.map((c) => c.entry.qty)),
    integerArray(changes.map((c) => c.cause)),
  ];
}

/** $24–$33. */
function versionValues(c: VersionColumns): unknown[] {
  return [
    textArray(c.items),
    textArray(c.locations),
    textArray(c.days),
    integerArray(c.versions),
    integerArray(c.closings),
    textArray(c.statuses),
    booleanArray(c.retracted),
    integerArray(c.causes),
    byteaArray(c.recordKeys),
    byteaArray(c.recordValues),
  ];
}

/** $36–$45. */
function changedDayValues(days: readonly ChangedDay[]): unknown[] {
  return [
    textArray(days.map((d) => d.item)),
    textArray(days.map((d) => d.location)),
    textArray(days.map((d) => d.row.day)),
    integerArray(days.map((d) => d.row.output.version)),
    integerArray(days.map((d) => d.row.output.closing)),
    textArray(days.map((d) => d.row.output.status)),
    booleanArray(days.map((d) => d.row.output.retracted)),
    integerArray(days.map((d) => d.cause)),
    integerArray(days.map((d) => d.row.total.qty)),
    integerArray(days.map((d) => d.row.total.posts)),
  ];
}
