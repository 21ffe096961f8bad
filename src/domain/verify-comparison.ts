/**
 * The bounded verifier's comparison (verification.md, step 5), without I/O: the oracle's
 * result over the source records in [0, end) against what the store, the outbox, the output
 * topic and the view hold. The reader feeds each of them in (streamed, one row at a time),
 * then `finish` judges what is missing and returns the report.
 *
 * The oracle is the truth for every version, wherever it is found; the database's snapshot
 * decides only how far things should have got:
 * - a decision, output version, quarantine row or outbox envelope is expected exactly when
 *   its source offset (for a version: its cause) lies below that partition's frontier; one
 *   at or past the frontier is "not drained yet" (INCOMPLETE), never missing;
 * - every envelope the snapshot marks published must be on the output topic; the topic may
 *   hold more (published after the snapshot, or twice after a lost delivery result) as long
 *   as each record is byte for byte an oracle version: identical duplicates are fine, a
 *   different content for one (item, location, day, version) is a conflict;
 * - the view must hold, per (item, location, day), the database's latest version; a lower
 *   one is "behind" unless the view's frontier has already passed that version's record on
 *   the topic, in which case the view is wrong.
 *
 * Anything wrong, missing, extra or conflicting is a difference (FAIL); not drained is a
 * reason (INCOMPLETE); neither is PASS.
 */
import { type NamespaceConfig, stockKeyId, stockKeyIndex } from './config.js';
import type { Decision } from './decision.js';
import { decisionFields, outputFields, outputRecordKey, outputRecordValue, toBase64 } from './export-lines.js';
import type { OracleResult } from './oracle.js';
import type { OutputVersion } from './output-version.js';
import type { SourceRecord } from './source-record.js';
import {
  type Difference,
  type DifferenceKind,
  differenceKinds,
  listedDifferencesMax,
  type VerifyDocument,
} from './verify-document.js';

export interface VerifyBounds {
  config: NamespaceConfig;
  /** Every source record read in [0, end) with read_committed. */
  records: readonly SourceRecord[];
  /** `runOracle(config, records)`. */
  oracle: OracleResult;
  /** The bound: each source partition's read-committed end. */
  ends: ReadonlyMap<number, number>;
  /** The database's frontier per partition (absent: never claimed, 0). */
  frontiers: ReadonlyMap<number, number>;
  /** Whether the namespace has an output binding; without one there is no topic or view to compare. */
  bound: boolean;
}

export interface QuarantineRow {
  decision: Decision;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

/** One outbox envelope as the store holds it (src/io/export-queries.ts reads them). */
export interface OutboxRow {
  partition: number;
  item: string;
  location: string;
  day: string;
  version: number;
  key: Uint8Array;
  value: Uint8Array;
  published: boolean;
}

export interface OutputTopicRecord {
  partition: number;
  offset: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

type VersionId = Pick<OutputVersion, 'item' | 'location' | 'day' | 'version'>;
type DayId = Pick<OutputVersion, 'item' | 'location' | 'day'>;

const text = new TextDecoder();

export class VerifyComparison {
  private readonly oracleDecisions = new Map<string, Decision>();
  private readonly sourceRecords = new Map<string, SourceRecord>();
  private readonly oracleVersions = new Map<string, OutputVersion>();
  private readonly partitionOf: (item: string, location: string) => number | undefined;

  private readonly seenDecisions = new Set<string>();
  private readonly seenQuarantine = new Set<string>();
  private readonly seenOutputs = new Set<string>();
  private readonly seenOutbox = new Set<string>();
  /** Version ids the snapshot's outbox marks published. */
  private readonly published = new Set<string>();
  /** Version id → where its first correct copy is on the output topic. */
  private readonly onTopic = new Map<string, { partition: number; offset: number }>();
  /** Day id → the database's latest version of it. */
  private readonly storeLatest = new Map<string, OutputVersion>();
  private readonly viewRows = new Map<string, OutputVersion>();
  /** Day ids whose view row is already reported wrong (not judged again as behind). */
  private readonly viewWrong = new Set<string>();
  private viewFrontiers: ReadonlyMap<number, number> | undefined;
  private outputEnds: ReadonlyMap<number, number> | undefined;

  private readonly listed = new Map<DifferenceKind, Difference[]>(differenceKinds.map((k) => [k, []]));
  private readonly totals = new Map<DifferenceKind, number>(differenceKinds.map((k) => [k, 0]));
  private readonly counts: VerifyDocument['counts'];

  constructor(private readonly bounds: VerifyBounds) {
    for (const d of bounds.oracle.decisions) this.oracleDecisions.set(offsetKey(d), d);
    for (const r of bounds.records) this.sourceRecords.set(offsetKey(r), r);
    for (const v of bounds.oracle.versions) this.oracleVersions.set(versionKey(v), v);
    const keys = stockKeyIndex(bounds.config);
    this.partitionOf = (item, location) => keys.get(stockKeyId(item, location))?.partition;
    this.counts = {
      records: bounds.records.length,
      decisions: 0,
      outputs: 0,
      quarantine: 0,
      outbox_pending: 0,
      view_rows: 0,
    };
  }

  /** One row of the store's decisions. */
  decision(got: Decision): void {
    this.counts.decisions += 1;
    const key = offsetKey(got);
    this.seenDecisions.add(key);
    const want = this.expectedDecision(key);
    if (!want) {
      this.differ('decision', key, null, decisionFields(got));
      return;
    }
    const [w, g] = [decisionFields(want), decisionFields(got)];
    if (!sameJson(w, g)) this.differ('decision', key, w, g);
  }

  /** One quarantined decision of the store, with its raw key and value bytes. */
  quarantined(got: QuarantineRow): void {
    this.counts.quarantine += 1;
    const key = offsetKey(got.decision);
    this.seenQuarantine.add(key);
    const want = this.expectedDecision(key);
    const gotFields = quarantineFields(got.decision, got);
    if (!want?.quarantined) {
      this.differ('quarantine', key, null, gotFields);
      return;
    }
    const wantFields = quarantineFields(want, this.sourceRecords.get(key) ?? { key: null, value: null });
    if (!sameJson(wantFields, gotFields)) this.differ('quarantine', key, wantFields, gotFields);
  }

  /** One output version of the store, in (item, location, day, version) order. */
  outputVersion(got: OutputVersion): void {
    this.counts.outputs += 1;
    const key = versionKey(got);
    this.seenOutputs.add(key);
    this.storeLatest.set(dayKey(got), got);
    const want = this.expectedVersion(key);
    if (!want) {
      this.differ('output', versionLabel(got), null, outputFields(got));
      return;
    }
    if (!sameJson(outputFields(want), outputFields(got))) {
      this.differ('output', versionLabel(got), outputFields(want), outputFields(got));
    }
  }

  /** One outbox envelope: it must carry exactly the oracle version's output topic record. */
  outboxRow(got: OutboxRow): void {
    if (!got.published) this.counts.outbox_pending += 1;
    const key = versionKey(got);
    this.seenOutbox.add(key);
    if (got.published) this.published.add(key);
    const want = this.expectedVersion(key);
    const gotRecord = { partition: got.partition, key: text.decode(got.key), value: text.decode(got.value) };
    if (!want) {
      this.differ('outbox', versionLabel(got), null, gotRecord);
      return;
    }
    const wantRecord = this.topicRecordOf(want);
    if (!sameJson(wantRecord, gotRecord)) this.differ('outbox', versionLabel(got), wantRecord, gotRecord);
  }

  /** The output topic's read-committed end per partition, read after the store snapshot. */
  outputTopicEnds(ends: ReadonlyMap<number, number>): void {
    this.outputEnds = ends;
  }

  /** One record of the output topic in [0, end): byte for byte an oracle version, or a difference. */
  topicRecord(got: OutputTopicRecord): void {
    const at = `${got.partition}:${got.offset}`;
    const content = {
      partition: got.partition,
      key: got.key === null ? null : text.decode(got.key),
      value: got.value === null ? null : text.decode(got.value),
    };
    const gotRecord = { ...content, offset: got.offset };
    const id = versionIdOf(content.value);
    if (!id) {
      this.differ('topic', at, null, gotRecord);
      return;
    }
    const key = versionKey(id);
    const want = this.oracleVersions.get(key);
    if (!want) {
      this.differ('topic', versionLabel(id), null, gotRecord);
      return;
    }
    const wantRecord = this.topicRecordOf(want);
    if (!sameJson(wantRecord, content)) {
      this.differ('topic', versionLabel(id), wantRecord, gotRecord);
      return;
    }
    if (!this.onTopic.has(key)) this.onTopic.set(key, { partition: got.partition, offset: got.offset });
  }

  /** The view's frontier per output partition (same snapshot as its rows). */
  viewPartitions(frontiers: ReadonlyMap<number, number>): void {
    this.viewFrontiers = frontiers;
  }

  /** One row of the view: it must be an oracle version, exactly. */
  viewRow(got: OutputVersion): void {
    this.counts.view_rows += 1;
    const day = dayKey(got);
    this.viewRows.set(day, got);
    const want = this.oracleVersions.get(versionKey(got));
    if (!want || !sameJson(outputFields(want), outputFields(got))) {
      this.viewWrong.add(day);
      this.differ('view', dayLabel(got), want ? outputFields(want) : null, outputFields(got));
    }
  }

  /** Judges what was not found and returns the report. */
  finish(): VerifyDocument {
    const notDrained: string[] = [];
    const notes: string[] = [];
    const partitions = this.sourcePartitions();
    for (const p of partitions) {
      if (p.frontier < p.end) notDrained.push(`partition ${p.partition}: frontier ${p.frontier} below end ${p.end}`);
      if (p.frontier > p.end)
        this.differ('decision', `partition ${p.partition}`, { end: p.end }, { frontier: p.frontier });
    }
    for (const [key, want] of this.oracleDecisions) {
      if (!this.isDecided(want)) continue;
      if (!this.seenDecisions.has(key)) this.differ('decision', key, decisionFields(want), null);
      if (want.quarantined && !this.seenQuarantine.has(key)) {
        const raw = this.sourceRecords.get(key) ?? { key: null, value: null };
        this.differ('quarantine', key, quarantineFields(want, raw), null);
      }
    }
    for (const [key, want] of this.oracleVersions) {
      if (!this.isDecided(want.cause)) continue;
      if (!this.seenOutputs.has(key)) this.differ('output', versionLabel(want), outputFields(want), null);
      if (!this.seenOutbox.has(key)) this.differ('outbox', versionLabel(want), this.topicRecordOf(want), null);
    }
    if (this.bounds.bound) this.judgeTransport(notDrained);
    else {
      notes.push(
        'no output binding: outbox delivery, the output topic and the view were not compared (amendsctl output-create binds one)',
      );
    }

    const failures = differenceKinds.flatMap((kind) => {
      const total = this.totals.get(kind) ?? 0;
      if (total === 0) return [];
      const first = this.listed.get(kind)?.[0]?.key;
      return [`${kind}: ${total} difference${total === 1 ? '' : 's'}, first at ${first}`];
    });
    const differences = differenceKinds.flatMap((kind) => this.listed.get(kind) ?? []).slice(0, listedDifferencesMax);
    const total = [...this.totals.values()].reduce((a, b) => a + b, 0);
    if (total > differences.length)
      failures.push(`${total} differences in all, the first ${differences.length} listed`);
    const verdict = failures.length > 0 ? 'FAIL' : notDrained.length > 0 ? 'INCOMPLETE' : 'PASS';
    return {
      verdict,
      reasons: [...failures, ...notDrained, ...notes],
      partitions,
      counts: { ...this.counts },
      differences,
    };
  }

  private judgeTransport(notDrained: string[]): void {
    if (this.counts.outbox_pending > 0) {
      notDrained.push(`relay behind: ${this.counts.outbox_pending} outbox envelopes not yet published`);
    }
    for (const key of this.published) {
      const want = this.oracleVersions.get(key);
      if (want && !this.onTopic.has(key)) this.differ('topic', versionLabel(want), this.topicRecordOf(want), null);
    }
    const ends = this.outputEnds ?? new Map<number, number>();
    const frontiers = this.viewFrontiers ?? new Map<number, number>();
    for (const partition of [...new Set([...ends.keys(), ...frontiers.keys()])].sort((a, b) => a - b)) {
      const [frontier, end] = [frontiers.get(partition) ?? 0, ends.get(partition) ?? 0];
      if (frontier < end)
        notDrained.push(`view partition ${partition}: frontier ${frontier} below output topic end ${end}`);
      if (frontier > end) this.differ('view', `partition ${partition}`, { end }, { frontier });
    }
    for (const [day, row] of this.viewRows) {
      if (this.viewWrong.has(day)) continue;
      const latest = this.storeLatest.get(day);
      // The view can only hold what the database committed before it: more is wrong.
      if (!latest || row.version > latest.version) {
        this.viewWrong.add(day);
        this.differ('view', dayLabel(row), latest ? outputFields(latest) : null, outputFields(row));
      }
    }
    let behind = 0;
    for (const [day, latest] of this.storeLatest) {
      const row = this.viewRows.get(day);
      if (this.viewWrong.has(day) || row?.version === latest.version) continue;
      const copy = this.onTopic.get(versionKey(latest));
      if (copy && (frontiers.get(copy.partition) ?? 0) > copy.offset) {
        this.differ('view', dayLabel(latest), outputFields(latest), row ? outputFields(row) : null);
      } else behind += 1;
    }
    if (behind > 0) {
      notDrained.push(
        `view behind: ${behind} of ${this.storeLatest.size} (item, location, day) rows not yet at the database's latest version`,
      );
    }
  }

  private sourcePartitions(): VerifyDocument['partitions'] {
    return [...this.bounds.ends.entries()]
      .sort(([a], [b]) => a - b)
      .map(([partition, end]) => ({ partition, frontier: this.frontierOf(partition), end }));
  }

  private frontierOf(partition: number): number {
    return this.bounds.frontiers.get(partition) ?? 0;
  }

  /** Whether the store should hold the decision of this source offset by now. */
  private isDecided(at: { partition: number; offset: number }): boolean {
    return at.offset < this.frontierOf(at.partition);
  }

  private expectedDecision(key: string): Decision | undefined {
    const want = this.oracleDecisions.get(key);
    return want && this.isDecided(want) ? want : undefined;
  }

  private expectedVersion(key: string): OutputVersion | undefined {
    const want = this.oracleVersions.get(key);
    return want && this.isDecided(want.cause) ? want : undefined;
  }

  /** The output topic record (domain.md §6) of an oracle version: its partition, key and value. */
  private topicRecordOf(v: OutputVersion) {
    return {
      partition: this.partitionOf(v.item, v.location) ?? null,
      key: outputRecordKey(v),
      value: outputRecordValue(v, this.bounds.config.namespace),
    };
  }

  private differ(kind: DifferenceKind, key: string, want: unknown, got: unknown): void {
    this.totals.set(kind, (this.totals.get(kind) ?? 0) + 1);
    const list = this.listed.get(kind);
    if (list && list.length < listedDifferencesMax) list.push({ kind, key, want, got });
  }
}

function offsetKey(at: { partition: number; offset: number }): string {
  return `${at.partition}:${at.offset}`;
}

function versionKey(v: VersionId): string {
  return JSON.stringify([v.item, v.location, v.day, v.version]);
}

function dayKey(v: DayId): string {
  return JSON.stringify([v.item, v.location, v.day]);
}

/** `widget@berlin 2026-03-02 v2`: what a reader of the report recognises. */
function versionLabel(v: VersionId): string {
  return `${dayLabel(v)} v${v.version}`;
}

function dayLabel(v: DayId): string {
  return `${v.item}@${v.location} ${v.day}`;
}

/** verification.md: quarantine compares (partition, offset, outcome, key bytes, value bytes). */
function quarantineFields(d: Decision, raw: { key: Uint8Array | null; value: Uint8Array | null }) {
  return {
    partition: d.partition,
    offset: d.offset,
    outcome: d.outcome,
    key_b64: toBase64(raw.key),
    value_b64: toBase64(raw.value),
  };
}

/** Field objects built in one fixed member order compare by their JSON text. */
function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The (item, location, day, version) a topic record claims to be, if its value says so at all. */
function versionIdOf(value: string | null): VersionId | undefined {
  if (value === null) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { item, location, day, version } = v as Record<string, unknown>;
  if (typeof item !== 'string' || typeof location !== 'string' || typeof day !== 'string') return undefined;
  if (typeof version !== 'number' || !Number.isSafeInteger(version)) return undefined;
  return { item, location, day, version };
}
