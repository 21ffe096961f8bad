/**
 * The bounded verifier's comparison (docs/design.md#bounded-verifier, step 5), without I/O, fed as streams:
 *
 * 1. per source partition, the source records in offset order (judged by the fast oracle as
 *    they come) merged with the store's decision rows in offset order: decisions and
 *    quarantine compared pair by pair (decision-merge.ts);
 * 2. the store's output versions and outbox envelopes in (item, location, day, version)
 *    order, against the oracle's versions (version-ledger.ts);
 * 3. the output topic, record by record; 4. the view's rows.
 * Then `finish` judges what was not found and returns the report.
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
 *   one is "behind" unless the view's frontier has already passed that version's first copy
 *   on the topic, in which case the view is wrong. (The phases come in this order, so the
 *   store's latest versions and their copies are known when the view's rows arrive.)
 *
 * Memory: the oracle's per-key state, the ledger (version-ledger.ts says its bound), one
 * chunk of each stream; never a record's bytes beyond its chunk.
 */
import { compareCodePoints } from '../domain/canonical-json.js';
import type { NamespaceConfig } from '../domain/config.js';
import type { ConfigRevision } from '../domain/config-revision.js';
import type { Decision } from '../domain/decision.js';
import type { OutputVersion } from '../domain/output-version.js';
import type { SourceRecord } from '../domain/source-record.js';
import {
  decisionFields,
  type OutputTopicRecord,
  quarantineFields,
  sameDecision,
  sameJson,
  sameRecord,
  sameVersion,
  storeVersionFields,
  versionFields,
  versionLabel,
} from './compared-fields.js';
import { OffsetMerge } from './decision-merge.js';
import { DifferenceList } from './difference-list.js';
import { FastOracle, type OracleDecision } from './fast-oracle.js';
import { type ExpectedVersion, expectedRecordKey, expectedRecordValue } from './output-record-text.js';
import { TransportJudge } from './transport-judge.js';
import type { VerifyDocument } from './verify-document.js';
import { type LedgerDay, publishedInOutbox, seenInOutbox, seenInStore, VersionLedger } from './version-ledger.js';

export type { OutputTopicRecord } from './compared-fields.js';

export interface VerifyBounds {
  /** Revision 1. */
  config: NamespaceConfig;
  /** Revisions 2… (docs/design.md#configuration-revisions); absent: none. */
  revisions?: readonly ConfigRevision[];
  /** The bound: each source partition's read-committed end. */
  ends: ReadonlyMap<number, number>;
  /** The database's frontier per partition (absent: never claimed, 0). */
  frontiers: ReadonlyMap<number, number>;
  /** Whether the namespace has an output binding; without one there is no topic or view to compare. */
  bound: boolean;
}

/** One decision row of the store, with its raw bytes when it is quarantined. */
export interface StoredDecision extends Decision {
  key: Uint8Array | null;
  value: Uint8Array | null;
}

/** One outbox envelope as the store holds it. */
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

interface Judged {
  offset: number;
  decision: OracleDecision;
  /** Kept for a quarantined decision only (its raw bytes are compared). */
  record: SourceRecord | undefined;
}

const text = new TextDecoder();

export class VerifyComparison {
  /** Dropped once the source is read: its authority is most of the verifier's memory. */
  private oracle: FastOracle | undefined;
  readonly ledger: VersionLedger;
  readonly differences = new DifferenceList();
  private readonly transport: TransportJudge;
  private merge: { partition: number; merge: OffsetMerge<Judged, StoredDecision> } | undefined;
  private readonly counts: VerifyDocument['counts'] = {
    records: 0,
    decisions: 0,
    outputs: 0,
    quarantine: 0,
    outbox_pending: 0,
    view_rows: 0,
  };

  constructor(private readonly bounds: VerifyBounds) {
    const revisions = bounds.revisions ?? [];
    this.oracle = new FastOracle(bounds.config, revisions);
    // A key's terms never change once it has versions, so the newest revision has every versioned key's.
    this.ledger = new VersionLedger(revisions[revisions.length - 1]?.config ?? bounds.config);
    this.transport = new TransportJudge(this.ledger, this.differences);
  }

  /** Starts the merge of one source partition (after the previous one has ended). */
  startPartition(partition: number): void {
    if (this.merge) throw new Error(`verify: partition ${this.merge.partition} still open`);
    this.merge = { partition, merge: new OffsetMerge((s, t) => this.judgeOffset(s, t)) };
  }

  /** The partition's next source record in [0, end), in offset order. */
  sourceRecord(record: SourceRecord): void {
    const merge = this.openMerge(record.partition);
    this.counts.records += 1;
    if (!this.oracle) throw new Error('verify: a source record after the source was read');
    const decision = this.oracle.judge(record, (v) => this.ledger.add(v));
    // Only a quarantined record's bytes are compared: the others are not kept while queued.
    merge.pushSource({ offset: record.offset, decision, record: decision.quarantined ? record : undefined });
  }

  /** The partition's next decision row of the store, in offset order. */
  storedDecision(row: StoredDecision): void {
    this.openMerge(row.partition).pushStore(row);
  }

  /** Whether the source has read ahead of the store rows pushed so far. */
  needsStoredDecisions(): boolean {
    return this.merge?.merge.needsStore() ?? false;
  }

  /** The partition's source records have all been pushed. */
  sourceEnded(partition: number): void {
    this.openMerge(partition).endSource();
  }

  /** The partition's store rows have all been pushed. */
  storeEnded(partition: number): void {
    this.openMerge(partition).endStore();
  }

  /** Both streams of the partition have ended (and are ended here if they were not yet). */
  endPartition(partition: number): void {
    const merge = this.openMerge(partition);
    merge.endSource();
    merge.endStore();
    this.merge = undefined;
    this.oracle?.partitionJudged(partition);
  }

  /** Every source partition has been compared: the oracle's work is done, its versions are laid out. */
  sourceRead(): void {
    this.oracle = undefined;
    this.ledger.seal();
  }

  /** A decision row of a partition the source does not have (beyond its partition count): extra. */
  strayDecision(got: StoredDecision): void {
    this.counts.decisions += 1;
    this.differences.add('decision', `${got.partition}:${got.offset}`, null, decisionFields(got));
  }

  /** One output version of the store, in (item, location, day, version) order. */
  outputVersion(got: OutputVersion): void {
    this.counts.outputs += 1;
    const day = this.ledger.dayOf(got.item, got.location, got.day);
    const { storeLatest } = this.ledger.days;
    storeLatest.set(day, Math.max(storeLatest.get(day), got.version));
    const want = this.expectedVersion(day, got.version);
    if (want) this.ledger.mark(day, got.version, seenInStore);
    if (!want || !sameVersion(want, got)) {
      this.differences.add('output', versionLabel(got), want ? versionFields(want) : null, storeVersionFields(got));
    }
  }

  /** One outbox envelope: it must carry exactly the oracle version's output topic record. */
  outboxRow(got: OutboxRow): void {
    if (!got.published) this.counts.outbox_pending += 1;
    const day = this.ledger.dayOf(got.item, got.location, got.day);
    const want = this.expectedVersion(day, got.version);
    this.ledger.mark(day, got.version, (got.published ? publishedInOutbox : 0) | (want ? seenInOutbox : 0));
    const gotRecord = { partition: got.partition, key: text.decode(got.key), value: text.decode(got.value) };
    const wantRecord = want ? this.topicRecordOf(want) : null;
    if (!wantRecord || !sameRecord(wantRecord, gotRecord)) {
      this.differences.add('outbox', versionLabel(got), wantRecord, gotRecord);
    }
  }

  /** The output topic's read-committed end per partition, read after the store snapshot. */
  outputTopicEnds(ends: ReadonlyMap<number, number>): void {
    this.transport.outputEnds = ends;
  }

  /** One record of the output topic in [0, end): byte for byte an oracle version, or a difference. */
  topicRecord(got: OutputTopicRecord): void {
    this.transport.topicRecord(got, (want) => this.topicRecordOf(want));
  }

  /** The view's frontier per output partition (same snapshot as its rows). */
  viewPartitions(frontiers: ReadonlyMap<number, number>): void {
    this.transport.viewFrontiers = frontiers;
  }

  /** One row of the view, after the topic: it must be an oracle version, the store's latest. */
  viewRow(got: OutputVersion): void {
    this.counts.view_rows += 1;
    this.transport.viewRow(got, storeVersionFields(got));
  }

  /** Judges what was not found and returns the report. */
  finish(): VerifyDocument {
    const notDrained: string[] = [];
    const notes: string[] = [];
    const partitions = this.sourcePartitions();
    for (const p of partitions) {
      if (p.frontier < p.end) notDrained.push(`partition ${p.partition}: frontier ${p.frontier} below end ${p.end}`);
      if (p.frontier > p.end)
        this.differences.add('decision', `partition ${p.partition}`, { end: p.end }, { frontier: p.frontier });
    }
    const days = this.ledger.days.sorted(compareCodePoints);
    for (const day of days) this.judgeMissingVersions(day);
    if (this.bounds.bound) {
      if (this.counts.outbox_pending > 0) {
        notDrained.push(`relay behind: ${this.counts.outbox_pending} outbox envelopes not yet published`);
      }
      notDrained.push(...this.transport.finish(days, (want) => this.topicRecordOf(want)));
    } else {
      notes.push(
        'no output binding: outbox delivery, the output topic and the view were not compared (amendsctl output-create binds one)',
      );
    }
    const failures = this.differences.reasons();
    const verdict = failures.length > 0 ? 'FAIL' : notDrained.length > 0 ? 'INCOMPLETE' : 'PASS';
    return {
      verdict,
      reasons: [...failures, ...notDrained, ...notes],
      partitions,
      counts: { ...this.counts },
      differences: this.differences.differences(),
    };
  }

  /** Every version of the day the store and outbox should hold by now and do not. */
  private judgeMissingVersions(day: LedgerDay): void {
    const count = this.ledger.days.count.get(day);
    for (let version = 1; version <= count; version++) {
      const want = this.expectedVersion(day, version);
      if (!want) continue;
      const flags = this.ledger.flags(day, version);
      if (!(flags & seenInStore)) this.differences.add('output', versionLabel(want), versionFields(want), null);
      if (!(flags & seenInOutbox)) this.differences.add('outbox', versionLabel(want), this.topicRecordOf(want), null);
    }
  }

  /** One offset of the merge: the oracle's decision there (if a source record is), the store's row (if any). */
  private judgeOffset(source: Judged | undefined, got: StoredDecision | undefined): void {
    const partition = (source?.decision.partition ?? got?.partition) as number;
    const offset = (source?.offset ?? got?.offset) as number;
    const key = () => `${partition}:${offset}`; // built only for a difference
    const want = source && this.isDecided(source.decision) ? source.decision : undefined;
    if (got) {
      this.counts.decisions += 1;
      if (!want || !sameDecision(want, got)) {
        this.differences.add('decision', key(), want ? decisionFields(want) : null, decisionFields(got));
      }
    } else if (want) this.differences.add('decision', key(), decisionFields(want), null);

    const wantQ = want?.quarantined && source?.record ? quarantineFields(want, source.record) : null;
    if (got?.quarantined) {
      this.counts.quarantine += 1;
      const gotQ = quarantineFields(got, got);
      if (!wantQ || !sameJson(wantQ, gotQ)) this.differences.add('quarantine', key(), wantQ, gotQ);
    } else if (wantQ) this.differences.add('quarantine', key(), wantQ, null);
  }

  private openMerge(partition: number): OffsetMerge<Judged, StoredDecision> {
    if (this.merge?.partition !== partition) throw new Error(`verify: partition ${partition} is not the open one`);
    return this.merge.merge;
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

  /** The oracle's version, when the store should hold it by now. */
  private expectedVersion(day: LedgerDay, version: number): ExpectedVersion | undefined {
    const want = this.ledger.version(day, version);
    return want && this.isDecided(want.cause) ? want : undefined;
  }

  /** The output topic record (docs/design.md#output-envelope) of an oracle version: its partition, key and value. */
  private topicRecordOf(v: ExpectedVersion) {
    return {
      partition: v.cause.partition,
      key: expectedRecordKey(v),
      value: expectedRecordValue(v, this.bounds.config.namespace),
    };
  }
}
