/**
 * The fields the verifier compares and reports (verify-comparison.ts, transport-judge.ts), each
 * built in one fixed member order so that two of them compare by their JSON text, and the
 * labels that name a version or a day in the report.
 */
import type { Decision } from '../domain/decision.js';
import { decisionFields as exportedDecisionFields, outputFields } from '../domain/export-lines.js';
import type { OutputVersion } from '../domain/output-version.js';
import type { ExpectedVersion } from './output-record-text.js';

export interface OutputTopicRecord {
  partition: number;
  offset: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

/**
 * A decision's compared fields (docs/design.md#export's export members), in export's order
 * (src/domain/export-lines.ts).
 */
export function decisionFields(d: Omit<Decision, 'detail'>) {
  return exportedDecisionFields({ ...d, detail: null });
}

/** An oracle version's compared fields, in export's member order (src/domain/export-lines.ts). */
export function versionFields(v: ExpectedVersion) {
  return outputFields({ ...v, retracted: v.closing === null });
}

/** A stored version's fields in the same order; `retracted` as stored, not derived. */
export function storeVersionFields(v: OutputVersion) {
  return outputFields(v);
}

/** `widget@berlin 2026-03-02 v2`: what a reader of the report recognises. */
export function versionLabel(v: { item: string; location: string; day: string; version: number }): string {
  return `${dayLabel(v)} v${v.version}`;
}

export function dayLabel(v: { item: string; location: string; day: string }): string {
  return `${v.item}@${v.location} ${v.day}`;
}

/** docs/design.md#verification: quarantine compares (partition, offset, outcome, key bytes, value bytes). */
export function quarantineFields(
  d: { partition: number; offset: number; outcome: string },
  raw: { key: Uint8Array | null; value: Uint8Array | null },
) {
  return {
    partition: d.partition,
    offset: d.offset,
    outcome: d.outcome,
    key_b64: base64(raw.key),
    value_b64: base64(raw.value),
  };
}

function base64(bytes: Uint8Array | null): string | null {
  return bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** The oracle's decision and a stored one say the same (the compared fields; a difference builds the objects). */
export function sameDecision(
  w: Pick<Decision, 'partition' | 'offset' | 'outcome' | 'item' | 'location' | 'txn' | 'rev'>,
  g: Decision,
): boolean {
  return (
    w.partition === g.partition &&
    w.offset === g.offset &&
    w.outcome === g.outcome &&
    w.item === g.item &&
    w.location === g.location &&
    w.txn === g.txn &&
    w.rev === g.rev
  );
}

/** An oracle version and a stored (or viewed) one say the same, `retracted` included. */
export function sameVersion(w: ExpectedVersion, g: OutputVersion): boolean {
  return (
    w.item === g.item &&
    w.location === g.location &&
    w.day === g.day &&
    w.version === g.version &&
    w.closing === g.closing &&
    w.status === g.status &&
    (w.closing === null) === g.retracted &&
    w.cause.partition === g.cause.partition &&
    w.cause.offset === g.cause.offset
  );
}

/** Two output topic records (partition, key text, value text) are the same. */
export function sameRecord(
  a: { partition: number | null; key: string | null; value: string | null },
  b: { partition: number | null; key: string | null; value: string | null },
): boolean {
  return a.partition === b.partition && a.key === b.key && a.value === b.value;
}

/** Field objects built in one fixed member order compare by their JSON text. */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
