/**
 * The incremental decision engine: what the worker commits for each source record
 * (docs/design.md#outcomes precedence and authority, docs/design.md#output-versions output versions).
 *
 * Per record it touches only the record's stock key: one authority entry, at most two
 * per-day totals, and the closings from the earliest changed day onward. It never rescans
 * a key's history. `state` is mutated in place; a caller that must roll back (a failed
 * commit) reloads or snapshots it (ledger-state.ts).
 *
 * The oracles (src/verify/fast-oracle.ts, test/support/reference-oracle.ts) recompute the
 * same results independently.
 */

import { assertInvariant } from '../kernel/invariant.js';
import { compareCodePoints } from './canonical-json.js';
import { type NamespaceConfig, stockKeyId } from './config.js';
import type { Decision, Outcome } from './decision.js';
import { decodeEnvelope, type Envelope, envelopeSchemaVersion } from './envelope.js';
import {
  type AuthorityEntry,
  type DayOutput,
  type DayTotal,
  emptyKeyState,
  type KeyState,
  type LedgerState,
} from './ledger-state.js';
import type { BalanceStatus, OutputVersion } from './output-version.js';
import { decodeRecordKey } from './record-key.js';
import type { SourceRecord } from './source-record.js';
import { type StockKeyTerms, stockKeyTerms } from './stock-key-terms.js';

export interface DecideResult {
  decision: Decision;
  /** In ascending day order; empty unless APPLIED changed S(K). */
  newVersions: OutputVersion[];
  /** The new authoritative revision written by an APPLIED decision; null otherwise. */
  authorityChange: { txn: string; entry: AuthorityEntry } | null;
}

/** The first six checks need no authority state; their result decides or names the key to load. */
export type Screened =
  | { kind: 'decided'; result: DecideResult }
  | { kind: 'authority'; envelope: Envelope; stockKey: StockKeyTerms };

/** docs/design.md#outcomes, the "quarantined" column. */
const quarantinedOutcomes: ReadonlySet<Outcome> = new Set<Outcome>([
  'MALFORMED',
  'SCHEMA',
  'KEY_MISMATCH',
  'UNKNOWN_KEY',
  'ROUTING',
  'BEFORE_ORIGIN',
  'CONFLICT',
]);

/** Decides one record, creating its key's state on first use. */
export function decide(record: SourceRecord, config: NamespaceConfig, state: LedgerState): DecideResult {
  const screened = screenRecord(record, config);
  if (screened.kind === 'decided') return screened.result;
  const id = stockKeyId(screened.stockKey.item, screened.stockKey.location);
  let keyState = state.get(id);
  if (keyState === undefined) {
    keyState = emptyKeyState();
    state.set(id, keyState);
  }
  return decideWithKeyState(record, screened.envelope, screened.stockKey, keyState);
}

/** Decides records in order (one partition's batch, or any interleaving of partitions). */
export function decideBatch(
  records: readonly SourceRecord[],
  config: NamespaceConfig,
  state: LedgerState,
): DecideResult[] {
  return records.map((record) => decide(record, config, state));
}

/** Checks 1–6 of docs/design.md#outcomes: MALFORMED, SCHEMA, KEY_MISMATCH, UNKNOWN_KEY, ROUTING, BEFORE_ORIGIN. */
export function screenRecord(record: SourceRecord, config: NamespaceConfig): Screened {
  const decoded = decodeEnvelope(record.value, envelopeSchemaVersion);
  if (decoded.outcome !== 'ok') {
    const detail =
      decoded.outcome === 'MALFORMED' ? `value is not a strict JSON object: ${decoded.detail}` : decoded.detail;
    return decided(record, decoded.outcome, null, detail);
  }
  const envelope = decoded.envelope;
  const key = decodeRecordKey(record.key);
  if (!key.valid) return decided(record, 'KEY_MISMATCH', envelope, key.reason);
  if (key.item !== envelope.item || key.location !== envelope.location) {
    return decided(
      record,
      'KEY_MISMATCH',
      envelope,
      `key ${describeKey(key.item, key.location)} differs from the envelope's ${describeKey(envelope.item, envelope.location)}`,
    );
  }
  const stockKey = stockKeyTerms(config, envelope.item, envelope.location);
  if (stockKey === undefined) {
    return decided(
      record,
      'UNKNOWN_KEY',
      envelope,
      `${describeKey(envelope.item, envelope.location)} is not a configured stock key`,
    );
  }
  if (stockKey.partition !== record.partition) {
    return decided(
      record,
      'ROUTING',
      envelope,
      `${describeKey(envelope.item, envelope.location)} maps to partition ${stockKey.partition}${byPartitioner(config)}, not ${record.partition}`,
    );
  }
  if (envelope.op === 'post' && envelope.day < config.ledger_origin) {
    return decided(
      record,
      'BEFORE_ORIGIN',
      envelope,
      `day ${envelope.day} is before the ledger origin ${config.ledger_origin}`,
    );
  }
  return { kind: 'authority', envelope, stockKey };
}

/**
 * Checks 7–10 (STALE, DUPLICATE, CONFLICT, APPLIED) against one key's state, and the output
 * versions (docs/design.md#output-versions).
 */
export function decideWithKeyState(
  record: SourceRecord,
  envelope: Envelope,
  stockKey: StockKeyTerms,
  keyState: KeyState,
): DecideResult {
  const current = keyState.authority.get(envelope.txn);
  const incoming = authorityEntryOf(envelope);
  if (current !== undefined) {
    if (envelope.rev < current.rev) return decidedResult(record, 'STALE', envelope, null);
    if (envelope.rev === current.rev) {
      if (sameContent(current, incoming)) return decidedResult(record, 'DUPLICATE', envelope, null);
      return decidedResult(
        record,
        'CONFLICT',
        envelope,
        `txn ${envelope.txn} rev ${envelope.rev} is already ${describeEntry(current)}; this record says ${describeEntry(incoming)}`,
      );
    }
  }
  keyState.authority.set(envelope.txn, incoming);
  const touchedDays: string[] = [];
  if (current?.op === 'post' && current.day !== null && current.qty !== null) {
    changeDayTotal(keyState.dayTotals, current.day, -current.qty, -1);
    touchedDays.push(current.day);
  }
  if (incoming.op === 'post' && incoming.day !== null && incoming.qty !== null) {
    changeDayTotal(keyState.dayTotals, incoming.day, incoming.qty, 1);
    touchedDays.push(incoming.day);
  }
  const newVersions =
    touchedDays.length === 0
      ? []
      : refreshOutputs(keyState, stockKey, touchedDays, { partition: record.partition, offset: record.offset });
  return {
    decision: decisionOf(record, 'APPLIED', envelope, null),
    newVersions,
    authorityChange: { txn: envelope.txn, entry: { ...incoming } },
  };
}

/**
 * Recomputes closings for days from the earliest touched day onward (days before it are
 * unchanged) and records a version for each day whose (closing, status) changed, appeared
 * or disappeared.
 *
 * Only those days are visited: the closing carried into the earliest touched day is the
 * closing shown for the last day before it, which this change did not touch. An append to a
 * key's latest day costs a binary search, not a walk of the key's history.
 */
function refreshOutputs(
  keyState: KeyState,
  stockKey: StockKeyTerms,
  touchedDays: readonly string[],
  cause: { partition: number; offset: number },
): OutputVersion[] {
  const order = keyState.dayOrder;
  // A touched day that became active joins the order; one that stopped being active stays
  // until its retraction below.
  for (const day of touchedDays) if (keyState.dayTotals.has(day)) insertDay(order, day);
  const earliest = [...touchedDays].sort(compareCodePoints)[0] as string;
  const start = lowerBound(order, earliest);
  let closing = stockKey.opening;
  if (start > 0) {
    const day = order[start - 1] as string;
    const shown = keyState.outputs.get(day);
    // Every day before `earliest` is untouched, so it is both active and shown.
    assertInvariant(
      shown !== undefined && !shown.retracted && shown.closing !== null && keyState.dayTotals.has(day),
      `day ${day} before ${earliest} is not both active and shown`,
    );
    closing = shown.closing;
  }

  const versions: OutputVersion[] = [];
  const retracted: string[] = [];
  for (let i = start; i < order.length; i++) {
    const day = order[i] as string;
    const total = keyState.dayTotals.get(day);
    const previous = keyState.outputs.get(day);
    const version = (previous?.version ?? 0) + 1;
    let next: DayOutput;
    if (total !== undefined) {
      closing += total.qty;
      // Closings are exact integers; a double beyond 2^53 would round silently (docs/design.md#output-versions).
      if (!Number.isSafeInteger(closing)) {
        throw new RangeError(`closing balance of ${stockKey.item}@${stockKey.location} on ${day} exceeds 2^53-1`);
      }
      const status = statusOf(closing, stockKey.threshold);
      if (previous !== undefined && !previous.retracted && previous.closing === closing && previous.status === status) {
        continue; // no empty amendments
      }
      next = { version, closing, status, retracted: false };
    } else {
      assertInvariant(previous !== undefined && !previous.retracted, `day ${day} neither active nor shown`);
      next = { version, closing: null, status: null, retracted: true };
      retracted.push(day);
    }
    keyState.outputs.set(day, next);
    versions.push({ item: stockKey.item, location: stockKey.location, day, ...next, cause: { ...cause } });
  }
  for (const day of retracted) order.splice(lowerBound(order, day), 1);
  return versions;
}

/** The index of the first day ≥ `day` in an ascending order. */
function lowerBound(order: readonly string[], day: string): number {
  let low = 0;
  let high = order.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareCodePoints(order[mid] as string, day) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

function insertDay(order: string[], day: string): void {
  const at = lowerBound(order, day);
  if (order[at] !== day) order.splice(at, 0, day);
}

function changeDayTotal(totals: Map<string, DayTotal>, day: string, qty: number, posts: number): void {
  const total = totals.get(day) ?? { qty: 0, posts: 0 };
  const next = { qty: total.qty + qty, posts: total.posts + posts };
  assertInvariant(next.posts >= 0, `day ${day} has a negative post count`);
  if (next.posts === 0) {
    assertInvariant(next.qty === 0, `day ${day} has no posts but a total of ${next.qty}`);
    totals.delete(day);
  } else {
    totals.set(day, next);
  }
}

function statusOf(closing: number, threshold: number): BalanceStatus {
  if (closing < 0) return 'NEGATIVE';
  if (closing < threshold) return 'LOW';
  return 'OK';
}

function authorityEntryOf(envelope: Envelope): AuthorityEntry {
  return envelope.op === 'post'
    ? { rev: envelope.rev, op: 'post', day: envelope.day, qty: envelope.qty }
    : { rev: envelope.rev, op: 'cancel', day: null, qty: null };
}

function sameContent(a: AuthorityEntry, b: AuthorityEntry): boolean {
  return a.op === b.op && a.day === b.day && a.qty === b.qty;
}

function describeEntry(e: AuthorityEntry): string {
  return e.op === 'post' ? `post ${e.day} qty ${e.qty}` : 'cancel';
}

function describeKey(item: string, location: string): string {
  return `(${JSON.stringify(item)}, ${JSON.stringify(location)})`;
}

function decisionOf(
  record: SourceRecord,
  outcome: Outcome,
  envelope: Envelope | null,
  detail: string | null,
): Decision {
  const quarantined = quarantinedOutcomes.has(outcome);
  return {
    partition: record.partition,
    offset: record.offset,
    outcome,
    item: envelope?.item ?? null,
    location: envelope?.location ?? null,
    txn: envelope?.txn ?? null,
    rev: envelope?.rev ?? null,
    quarantined,
    detail: quarantined ? (detail ?? outcome) : null,
  };
}

function decidedResult(
  record: SourceRecord,
  outcome: Outcome,
  envelope: Envelope | null,
  detail: string | null,
): DecideResult {
  return { decision: decisionOf(record, outcome, envelope, detail), newVersions: [], authorityChange: null };
}

function decided(record: SourceRecord, outcome: Outcome, envelope: Envelope | null, detail: string): Screened {
  return { kind: 'decided', result: decidedResult(record, outcome, envelope, detail) };
}

/** How the partition in a ROUTING detail was found: said for Kafka's partitioner, whose answer is not in the config. */
function byPartitioner(config: NamespaceConfig): string {
  return config.schema_version === 2 && config.partitioner === 'murmur2'
    ? " (Kafka's murmur2 partitioner over the canonical key bytes)"
    : '';
}
