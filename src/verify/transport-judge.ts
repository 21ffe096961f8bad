/**
 * The transport half of the verifier's comparison (docs/design.md#bounded-verifier, step 5; the rules are
 * in verify-comparison.ts's header): the output topic's records against the oracle's
 * versions, and the view's rows against the store's latest versions, judged as they come,
 * with what is left judged by `finish`. Memory: the ledger's per-version flags and per-day
 * record (the first copy of the store's latest version, whether the view holds the day).
 */
import type { OutputVersion } from '../domain/output-version.js';
import {
  dayLabel,
  type OutputTopicRecord,
  sameRecord,
  sameVersion,
  type storeVersionFields,
  versionFields,
  versionLabel,
} from './compared-fields.js';
import type { DifferenceList } from './difference-list.js';
import type { ExpectedVersion } from './output-record-text.js';
import { type LedgerDay, publishedInOutbox, seenOnTopic, type VersionLedger } from './version-ledger.js';

type TopicRecordOf = (v: ExpectedVersion) => { partition: number; key: string; value: string };

const text = new TextDecoder();

export class TransportJudge {
  outputEnds: ReadonlyMap<number, number> = new Map();
  viewFrontiers: ReadonlyMap<number, number> = new Map();
  /** Days whose view row is below the store's latest while the view's frontier has not passed its copy. */
  private behind = 0;

  constructor(
    private readonly ledger: VersionLedger,
    private readonly differences: DifferenceList,
  ) {}

  topicRecord(got: OutputTopicRecord, topicRecordOf: TopicRecordOf): void {
    const at = `${got.partition}:${got.offset}`;
    const content = {
      partition: got.partition,
      key: got.key === null ? null : text.decode(got.key),
      value: got.value === null ? null : text.decode(got.value),
    };
    const gotRecord = { partition: content.partition, key: content.key, value: content.value, offset: got.offset };
    const id = versionIdOf(content.value);
    if (!id) {
      this.differences.add('topic', at, null, gotRecord);
      return;
    }
    const day = this.ledger.findDay(id.item, id.location, id.day);
    const want = day === undefined ? undefined : this.ledger.version(day, id.version);
    if (day === undefined || !want) {
      this.differences.add('topic', versionLabel(id), null, gotRecord);
      return;
    }
    const wantRecord = topicRecordOf(want);
    if (!sameRecord(wantRecord, content)) {
      this.differences.add('topic', versionLabel(id), wantRecord, gotRecord);
      return;
    }
    this.ledger.mark(day, id.version, seenOnTopic);
    const { storeLatest, latestCopy } = this.ledger.days;
    if (id.version === storeLatest.get(day) && latestCopy.get(day) < 0) latestCopy.set(day, got.offset);
  }

  /** `gotFields`: the row's fields as the comparison reports them. */
  viewRow(got: OutputVersion, gotFields: ReturnType<typeof storeVersionFields>): void {
    const day = this.ledger.findDay(got.item, got.location, got.day);
    if (day !== undefined) this.ledger.days.viewed.set(day, 1);
    const want = day === undefined ? undefined : this.ledger.version(day, got.version);
    if (day === undefined || !want || !sameVersion(want, got)) {
      this.differences.add('view', dayLabel(got), want ? versionFields(want) : null, gotFields);
      return;
    }
    // The view can only hold what the database committed before it: more is wrong.
    const storeLatest = this.ledger.days.storeLatest.get(day);
    if (got.version > storeLatest) {
      this.differences.add('view', dayLabel(got), this.latestFields(day), gotFields);
      return;
    }
    if (got.version < storeLatest) this.judgeBehind(day, gotFields);
  }

  /** The view's frontiers against the topic's ends, missing copies, and the days the view lacks. */
  finish(days: Uint32Array, topicRecordOf: TopicRecordOf): string[] {
    const notDrained: string[] = [];
    const { count, storeLatest, viewed } = this.ledger.days;
    let storeDays = 0;
    for (const day of days) {
      for (let version = 1; version <= count.get(day); version++) {
        const flags = this.ledger.flags(day, version);
        if (flags & publishedInOutbox && !(flags & seenOnTopic)) {
          const want = this.ledger.version(day, version) as ExpectedVersion;
          this.differences.add('topic', versionLabel(want), topicRecordOf(want), null);
        }
      }
    }
    const [ends, frontiers] = [this.outputEnds, this.viewFrontiers];
    for (const partition of [...new Set([...ends.keys(), ...frontiers.keys()])].sort((a, b) => a - b)) {
      const [frontier, end] = [frontiers.get(partition) ?? 0, ends.get(partition) ?? 0];
      if (frontier < end)
        notDrained.push(`view partition ${partition}: frontier ${frontier} below output topic end ${end}`);
      if (frontier > end) this.differences.add('view', `partition ${partition}`, { end }, { frontier });
    }
    for (const day of days) {
      if (storeLatest.get(day) === 0) continue;
      storeDays += 1;
      if (viewed.get(day) === 0) this.judgeBehind(day, null);
    }
    if (this.behind > 0) {
      notDrained.push(
        `view behind: ${this.behind} of ${storeDays} (item, location, day) rows not yet at the database's latest version`,
      );
    }
    return notDrained;
  }

  /** A view row below the store's latest (or none): behind until the view's frontier passes the latest's copy. */
  private judgeBehind(day: LedgerDay, gotFields: ReturnType<typeof storeVersionFields> | null): void {
    const { days } = this.ledger;
    const partition = days.stockKey(day)?.partition;
    const copy = days.latestCopy.get(day);
    const passed = partition !== undefined && copy >= 0 && (this.viewFrontiers.get(partition) ?? 0) > copy;
    if (passed) this.differences.add('view', dayLabel(days.name(day)), this.latestFields(day), gotFields);
    else this.behind += 1;
  }

  /** The store's latest version of the day as the oracle says it (null when the oracle has none). */
  private latestFields(day: LedgerDay) {
    const latest = this.ledger.version(day, this.ledger.days.storeLatest.get(day));
    return latest ? versionFields(latest) : null;
  }
}

/** The (item, location, day, version) a topic record claims to be, if its value says so at all. */
function versionIdOf(value: string | null) {
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
