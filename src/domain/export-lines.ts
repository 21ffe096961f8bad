/**
 * Machine-readable lines shared by `export`, `simulate` and the verifier
 * (docs/design.md#export), their canonical orders, and the output topic record (docs/design.md#output-envelope).
 *
 * Export lines keep the member order docs/design.md#transport shows (JSON.stringify keeps insertion
 * order and escapes strings exactly as canonical JSON does), so two runs compare with diff.
 * Output topic records are canonical JSON (RFC 8785) instead.
 */
import { canonicalJson, compareCodePoints } from './canonical-json.js';
import { configDigest } from './config.js';
import type { RevisionChain } from './config-revision.js';
import type { Decision } from './decision.js';
import type { OutputVersion } from './output-version.js';

/** The output envelope's own format version (docs/design.md#output-envelope shows `"schema":1`). */
export const outputEnvelopeSchema = 1;

/** A decision's export fields in docs/design.md#export's member order (also the verifier's comparison). */
export function decisionFields(d: Decision) {
  return {
    partition: d.partition,
    offset: d.offset,
    outcome: d.outcome,
    item: d.item,
    location: d.location,
    txn: d.txn,
    rev: d.rev,
  };
}

/** `{"type":"decision","partition":0,"offset":5,"outcome":"DUPLICATE","item":…,"location":…,"txn":…,"rev":…}` */
export function decisionLine(d: Decision): string {
  return JSON.stringify({ type: 'decision', ...decisionFields(d) });
}

/** An output version's export fields in docs/design.md#export's member order (also the verifier's comparison). */
export function outputFields(v: OutputVersion) {
  return {
    item: v.item,
    location: v.location,
    day: v.day,
    version: v.version,
    closing: v.closing,
    status: v.status,
    retracted: v.retracted,
    cause: { partition: v.cause.partition, offset: v.cause.offset },
  };
}

/** `{"type":"output","item":…,"location":…,"day":…,"version":…,"closing":…,"status":…,"retracted":…,"cause":{…}}` */
export function outputLine(v: OutputVersion): string {
  return JSON.stringify({ type: 'output', ...outputFields(v) });
}

/** The view's line: the highest version per (item, location, day), retractions included. */
export function viewLine(v: OutputVersion): string {
  return JSON.stringify({ type: 'view', ...outputFields(v) });
}

/**
 * Decision fields, then the raw bytes as standard base64 (null for a null key or value),
 * then the decision's free-text detail (comparisons ignore it).
 */
export function quarantineLine(d: Decision, raw: { key: Uint8Array | null; value: Uint8Array | null }): string {
  return JSON.stringify({
    type: 'quarantine',
    ...decisionFields(d),
    key_b64: toBase64(raw.key),
    value_b64: toBase64(raw.value),
    detail: d.detail,
  });
}

/**
 * `{"type":"revision","revision":1,"from":{"0":0,"1":0},"digest":…,"config":…}`, one line per
 * configuration revision, revision 1 (the registered config, in force from offset 0 on every
 * partition) first. `from` is keyed by partition number, in that order; `config` is canonical
 * JSON (RFC 8785), the text the digests cover, so the chain can be checked from the lines alone
 * (docs/design.md#export).
 */
export function revisionLines(chain: RevisionChain): string[] {
  const { base } = chain;
  const first = { revision: 1, from: Array<number>(base.partitions).fill(0), config: base, digest: configDigest(base) };
  return [first, ...chain.revisions].map((r) => {
    const from = Object.fromEntries(r.from.map((offset, partition) => [String(partition), offset]));
    const head = JSON.stringify({ type: 'revision', revision: r.revision, from, digest: r.digest });
    // Spliced in as text: JSON.stringify would keep the config object's own member order.
    return `${head.slice(0, -1)},"config":${canonicalJson(r.config)}}`;
  });
}

export function toBase64(bytes: Uint8Array | null): string | null {
  return bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Export order of decisions: (partition, offset). */
export function compareDecisions(a: Decision, b: Decision): number {
  return a.partition - b.partition || a.offset - b.offset;
}

/** Export order of output versions: (item, location, day, version), strings by code point. */
export function compareOutputVersions(a: OutputVersion, b: OutputVersion): number {
  return (
    compareCodePoints(a.item, b.item) ||
    compareCodePoints(a.location, b.location) ||
    compareCodePoints(a.day, b.day) ||
    a.version - b.version
  );
}

export function sortDecisions(decisions: readonly Decision[]): Decision[] {
  return [...decisions].sort(compareDecisions);
}

export function sortOutputVersions(versions: readonly OutputVersion[]): OutputVersion[] {
  return [...versions].sort(compareOutputVersions);
}

/**
 * Output topic record key (docs/design.md#output-envelope): canonical `{"day":…,"item":…,"location":…}`.
 * Written member by member in RFC 8785's order, not through `canonicalJson`: one is written
 * per output version on the worker's hot path, where the generic writer (entries, sort, map,
 * join per object) was the largest single cost of a batch (a worker's CPU profile: 12% of its
 * busy time). Strings and numbers go through JSON.stringify exactly as `canonicalJson` does;
 * a property test checks both give the same text.
 */
export function outputRecordKey(v: OutputVersion): string {
  return `{"day":${JSON.stringify(v.day)},"item":${JSON.stringify(v.item)},"location":${JSON.stringify(v.location)}}`;
}

/** Output topic record value (docs/design.md#output-envelope), canonical JSON, written as `outputRecordKey` is. */
export function outputRecordValue(v: OutputVersion, namespace: string): string {
  const cause = `{"offset":${jsonNumber(v.cause.offset)},"partition":${jsonNumber(v.cause.partition)}}`;
  const closing = v.closing === null ? 'null' : jsonNumber(v.closing);
  const status = v.status === null ? 'null' : JSON.stringify(v.status);
  return (
    `{"cause":${cause},"closing":${closing},"day":${JSON.stringify(v.day)},"item":${JSON.stringify(v.item)},` +
    `"location":${JSON.stringify(v.location)},"namespace":${JSON.stringify(namespace)},` +
    `"retracted":${v.retracted ? 'true' : 'false'},"schema":${outputEnvelopeSchema},"status":${status},` +
    `"version":${jsonNumber(v.version)}}`
  );
}

/** A number as canonical JSON writes it (ECMAScript's serialisation); never NaN or ±Infinity. */
function jsonNumber(n: number): string {
  if (!Number.isFinite(n)) throw new TypeError(`${n} is not a JSON number`);
  return JSON.stringify(n);
}
