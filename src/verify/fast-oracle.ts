/**
 * The verifier's fast, independent oracle (docs/design.md#record-key, #envelope, #outcomes,
 * #output-versions, #verification): it judges the source records of each partition in offset order
 * and says every decision and every output version, sharing no function or data structure with the
 * worker's engine (src/domain's decide.ts, ledger-state.ts, key-window.ts) or its decoders (it has
 * its own, oracle-decoder.ts).
 *
 * It keeps the authority (one packed entry per transaction: the revision and what it says,
 * txn-authority.ts; per partition, cleared once the partition is judged) and per stock key its
 * days (key-days.ts). An APPLIED decision moves at most two posts; every later
 * day's closing is recomputed from the authoritative totals (a Fenwick prefix sum, then a
 * running sum over the days after it) and compared with what S(K) showed, as docs/design.md#output-versions says. Time:
 * O(log days) per record plus O(1) per day visited; memory: the transactions and the days.
 * test/support/reference-oracle.ts (the old, obvious, quadratic one) must agree with it.
 */
import type { NamespaceConfig } from '../domain/config.js';
import type { ConfigRevision } from '../domain/config-revision.js';
import type { SourceRecord } from '../domain/source-record.js';
import { dayCode, dayText } from './day-code.js';
import { KeyDays } from './key-days.js';
import { decodeOracleKey, decodeOracleValue, type OracleEnvelope } from './oracle-decoder.js';
import { OracleKeyRules, type OracleKeyTerms } from './oracle-key-terms.js';
import { PairMap } from './pair-map.js';
import { TxnAuthority, unknownTxn } from './txn-authority.js';

/** docs/design.md#outcomes, in precedence order. */
export type OracleOutcome =
  | 'MALFORMED'
  | 'SCHEMA'
  | 'KEY_MISMATCH'
  | 'UNKNOWN_KEY'
  | 'ROUTING'
  | 'BEFORE_ORIGIN'
  | 'STALE'
  | 'DUPLICATE'
  | 'CONFLICT'
  | 'APPLIED';

/** The oracle's own copy of the "quarantined" column (docs/design.md#outcomes). */
export const quarantinedOutcomes: ReadonlySet<OracleOutcome> = new Set([
  'MALFORMED',
  'SCHEMA',
  'KEY_MISMATCH',
  'UNKNOWN_KEY',
  'ROUTING',
  'BEFORE_ORIGIN',
  'CONFLICT',
]);

export interface OracleDecision {
  partition: number;
  offset: number;
  outcome: OracleOutcome;
  /** From the envelope; null for MALFORMED and SCHEMA. */
  item: string | null;
  location: string | null;
  txn: string | null;
  rev: number | null;
  quarantined: boolean;
}

/** One new version of (key, day); `closing` null is a retraction. */
export interface OracleVersion {
  /** The oracle's number for the stock key: 0, 1, … in the order it met them. */
  key: number;
  item: string;
  location: string;
  day: string;
  version: number;
  closing: number | null;
  causeOffset: number;
}

/** A transaction's authority before the record at hand. */
interface Revision {
  /** undefined: a cancel. */
  day: string | undefined;
  qty: number;
}

interface KeyState {
  /** The terms of the revision in force at the key's latest record. */
  terms: OracleKeyTerms;
  /** Whether the key has had an APPLIED record: its terms may never change again. */
  decided: boolean;
  index: number;
  item: string;
  location: string;
  /** Made at the key's first APPLIED, dropped once its partition is judged whole. */
  days: KeyDays | undefined;
}

export class FastOracle {
  /** The stock keys met so far (a default rule makes any valid key one: they are found as they come). */
  private readonly keys = new PairMap<KeyState>();
  private keyCount = 0;
  /** The rules of each revision, revision 1's first, with where on each partition it starts. */
  private readonly rules: { from: readonly number[]; rules: OracleKeyRules }[];
  /**
   * Per partition: a key's records all lie on its partition (others are ROUTING before any
   * authority is looked up), so a partition's authority is cleared once it is judged whole and
   * serves the next partition: memory follows the largest partition's transactions, not the
   * topic's.
   */
  private readonly authorities = new Map<number, TxnAuthority>();
  private readonly spare: TxnAuthority[] = [];
  private readonly judgedWhole = new Set<number>();

  /** `revisions`: the namespace's revisions after `config`, revision 1 (docs/design.md#configuration-revisions). */
  constructor(
    private readonly config: NamespaceConfig,
    revisions: readonly ConfigRevision[] = [],
  ) {
    const first = { from: new Array<number>(config.partitions).fill(0), rules: new OracleKeyRules(config) };
    this.rules = [first, ...revisions.map((r) => ({ from: r.from, rules: new OracleKeyRules(r.config) }))];
  }

  /**
   * Judges the next record of its partition (records of one partition in offset order;
   * partitions in any order, since a key's records all lie on its own partition). New
   * versions go to `onVersion`, in ascending day order.
   */
  judge(record: SourceRecord, onVersion: (v: OracleVersion) => void): OracleDecision {
    // The envelope format is version 1 under either configuration version (docs/choices.md).
    const value = decodeOracleValue(record.value, 1);
    if (value.outcome !== 'ok') return decisionOf(record, value.outcome, undefined);
    const envelope = value.envelope;
    const verdict = (outcome: OracleOutcome) => decisionOf(record, outcome, envelope);
    const key = decodeOracleKey(record.key);
    if (!key.valid || key.item !== envelope.item || key.location !== envelope.location) return verdict('KEY_MISMATCH');
    const terms = this.rulesAt(record.partition, record.offset).of(envelope.item, envelope.location);
    if (terms === undefined) return verdict('UNKNOWN_KEY');
    // Checked before the key's state is touched: a revision may have given a key other terms
    // since a record of it was quarantined here, and that record says nothing of its terms.
    if (terms.partition !== record.partition) return verdict('ROUTING');
    if (envelope.day !== undefined && envelope.day < this.config.ledger_origin) return verdict('BEFORE_ORIGIN');
    const state = this.stockKey(envelope.item, envelope.location, terms);
    const authority = this.authorityOf(record.partition);
    let entry = authority.find(state.index, envelope.txn);
    let known: Revision | undefined;
    if (entry === unknownTxn) entry = authority.add(state.index, envelope.txn);
    else {
      const rev = authority.rev(entry);
      known = { day: authority.day(entry), qty: authority.qty(entry) };
      if (envelope.rev < rev) return verdict('STALE');
      if (envelope.rev === rev) {
        const same = known.day === envelope.day && (envelope.qty === undefined || known.qty === envelope.qty);
        return verdict(same ? 'DUPLICATE' : 'CONFLICT');
      }
    }
    authority.set(entry, envelope.rev, envelope.day, envelope.qty ?? 0);
    state.decided = true;
    this.apply(state, envelope, known, record.offset, onVersion);
    return verdict('APPLIED');
  }

  /**
   * The partition's records have all been judged: its authority is cleared and its keys' days
   * dropped (their versions are all made), so the oracle holds one partition's state at a
   * time, not the topic's; none may follow.
   */
  partitionJudged(partition: number): void {
    const authority = this.authorities.get(partition);
    if (authority) {
      authority.clear();
      this.spare.push(authority);
      this.authorities.delete(partition);
    }
    for (const state of this.keys.values()) if (state.terms.partition === partition) state.days = undefined;
    this.judgedWhole.add(partition);
  }

  /** The rules of the revision in force at (partition, offset): the newest that starts at or before it. */
  private rulesAt(partition: number, offset: number): OracleKeyRules {
    for (let i = this.rules.length - 1; i > 0; i--) {
      const revision = this.rules[i] as { from: readonly number[]; rules: OracleKeyRules };
      if ((revision.from[partition] as number) <= offset) return revision.rules;
    }
    return (this.rules[0] as { rules: OracleKeyRules }).rules;
  }

  /**
   * The key's state with `terms`, those of the revision in force at a record on the key's own
   * partition. A key nothing was applied to takes each revision's terms as they come; a decided
   * key's terms are part of every closing published, so a revision that changes them is a
   * broken chain.
   */
  private stockKey(item: string, location: string, terms: OracleKeyTerms): KeyState {
    let state = this.keys.get(item, location);
    if (state === undefined) {
      state = { terms, decided: false, index: this.keyCount++, item, location, days: undefined };
      this.keys.set(item, location, state);
    } else if (!sameTerms(state.terms, terms)) {
      if (state.decided)
        throw new Error(`verify: a revision changes the terms of ${item}@${location}, which has decisions`);
      state.terms = terms;
    }
    return state;
  }

  private authorityOf(partition: number): TxnAuthority {
    let authority = this.authorities.get(partition);
    if (!authority) {
      if (this.judgedWhole.has(partition)) throw new Error(`verify: a record of partition ${partition} after its end`);
      authority = this.spare.pop() ?? new TxnAuthority();
      this.authorities.set(partition, authority);
    }
    return authority;
  }

  private apply(
    state: KeyState,
    envelope: OracleEnvelope,
    known: Revision | undefined,
    offset: number,
    onVersion: (v: OracleVersion) => void,
  ): void {
    const next: Revision = { day: envelope.day, qty: envelope.qty ?? 0 };
    state.days ??= new KeyDays();
    const { days } = state;
    // Insert the new day first: inserting shifts the slots after it.
    const newSlot = next.day === undefined ? undefined : days.slotOf(dayCode(next.day));
    const oldSlot = known?.day === undefined ? undefined : days.find(dayCode(known.day));
    if (oldSlot !== undefined) days.addPost(oldSlot, -(known as Revision).qty, -1);
    if (newSlot !== undefined) days.addPost(newSlot, next.qty, 1);
    if (oldSlot === undefined && newSlot === undefined) return;
    const from = Math.min(oldSlot ?? Number.POSITIVE_INFINITY, newSlot ?? Number.POSITIVE_INFINITY);
    const last = Math.max(oldSlot ?? -1, newSlot ?? -1);
    // Past the last touched day every closing moves by the same amount: none when it is 0.
    const shift = (newSlot === undefined ? 0 : next.qty) - (oldSlot === undefined ? 0 : (known as Revision).qty);
    const to = shift === 0 ? last : days.length - 1;
    let closing = state.terms.opening + (from > 0 ? days.prefix(from - 1) : 0);
    for (let slot = from; slot <= to; slot++) {
      closing += days.total[slot] as number;
      if (!Number.isSafeInteger(closing)) {
        throw new RangeError(`oracle: closing on ${dayText(days.days[slot] as number)} exceeds 2^53-1`);
      }
      const isShown = (days.posts[slot] as number) > 0;
      const was = days.shown[slot] as number;
      if (isShown ? was === closing : Number.isNaN(was)) continue;
      const version = (days.versions[slot] as number) + 1;
      days.versions[slot] = version;
      days.shown[slot] = isShown ? closing : Number.NaN;
      onVersion({
        key: state.index,
        item: state.item,
        location: state.location,
        day: dayText(days.days[slot] as number),
        version,
        closing: isShown ? closing : null,
        causeOffset: offset,
      });
    }
  }
}

function decisionOf(
  record: SourceRecord,
  outcome: OracleOutcome,
  envelope: OracleEnvelope | undefined,
): OracleDecision {
  return {
    partition: record.partition,
    offset: record.offset,
    outcome,
    item: envelope ? envelope.item : null,
    location: envelope ? envelope.location : null,
    txn: envelope ? envelope.txn : null,
    rev: envelope ? envelope.rev : null,
    quarantined: quarantinedOutcomes.has(outcome),
  };
}

function sameTerms(a: OracleKeyTerms, b: OracleKeyTerms): boolean {
  return a.partition === b.partition && a.opening === b.opening && a.threshold === b.threshold;
}
