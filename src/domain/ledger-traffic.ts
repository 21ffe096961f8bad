/**
 * Plausible stock-ledger traffic for the benchmark: per stock key, mostly new posts on the
 * latest day, with corrections, cancels, redeliveries (duplicates), stale revisions and some
 * garbage, in the proportions a busy ledger might show. Deterministic for a seed, pure (no
 * I/O): the harness publishes what it returns, and the same seed gives the same topic.
 *
 * Corrections and cancels touch recent transactions only, so a change amends the last few
 * days and not the whole history (a real ledger's corrections are mostly recent too).
 * Each record says what it is (`kind`, not published), so a harness can count the distinct
 * transactions it published without keeping them.
 */
import { addDays } from './calendar-day.js';
import { canonicalJson } from './canonical-json.js';
import { mulberry32 } from './seeded-random.js';
import type { StockKeyTerms } from './stock-key-terms.js';

export interface TrafficRecord {
  partition: number;
  key: Buffer;
  value: Buffer;
  /** What the record is (not published): `post` starts a new transaction (rev 1). */
  kind: TrafficKind;
}

export type TrafficKind = 'post' | 'correction' | 'cancel' | 'redelivery' | 'stale' | 'garbage';

export interface TrafficOptions {
  /** The configured stock keys; records are spread over them round-robin. */
  keys: readonly StockKeyTerms[];
  /** New posts per day and key before the next day starts. */
  postsPerDay: number;
  /** The first posting day (after the ledger origin). */
  firstDay: string;
  seed: number;
  /** Prefixes the transaction ids, so two streams on one topic never share a txn. */
  txnPrefix: string;
}

interface Txn {
  txn: string;
  rev: number;
  op: 'post' | 'cancel';
  day: string;
  qty: number;
}

/** One key's stream: what it has posted so far, so that revisions refer to real transactions. */
class KeyStream {
  private readonly recent: Txn[] = [];
  private posts = 0;
  private readonly keyBytes: Buffer;

  constructor(
    private readonly stockKey: StockKeyTerms,
    private readonly options: TrafficOptions,
    private readonly random: () => number,
  ) {
    this.keyBytes = Buffer.from(canonicalJson({ item: stockKey.item, location: stockKey.location }), 'utf8');
  }

  next(): TrafficRecord {
    const roll = this.random();
    const target =
      this.recent.length > 10 ? this.recent[this.recent.length - 1 - Math.floor(this.random() * 10)] : undefined;
    let value: Buffer;
    let kind: TrafficKind;
    if (target !== undefined && roll < 0.04 && target.op === 'post') {
      // A correction: the same transaction, a higher revision, another quantity.
      target.rev += 1;
      target.qty = this.quantity();
      value = this.envelope(target);
      kind = 'correction';
    } else if (target !== undefined && roll < 0.06 && target.op === 'post') {
      target.rev += 1;
      target.op = 'cancel';
      value = this.envelope(target);
      kind = 'cancel';
    } else if (target !== undefined && roll < 0.09) {
      value = this.envelope(target); // a redelivery of the current revision: DUPLICATE
      kind = 'redelivery';
    } else if (target !== undefined && roll < 0.1 && target.rev > 1) {
      value = this.envelope({ ...target, rev: target.rev - 1 }); // an older revision: STALE
      kind = 'stale';
    } else if (roll < 0.11) {
      value = Buffer.from('{"not":"an envelope"', 'utf8'); // garbage: MALFORMED, quarantined
      kind = 'garbage';
    } else {
      const day = addDays(this.options.firstDay, Math.floor(this.posts / this.options.postsPerDay));
      const txn: Txn = { txn: `${this.options.txnPrefix}${this.posts}`, rev: 1, op: 'post', day, qty: this.quantity() };
      this.posts += 1;
      this.recent.push(txn);
      if (this.recent.length > 64) this.recent.shift();
      value = this.envelope(txn);
      kind = 'post';
    }
    return { partition: this.stockKey.partition, key: this.keyBytes, value, kind };
  }

  private quantity(): number {
    return Math.floor(this.random() * 21) - 10;
  }

  private envelope(t: Txn): Buffer {
    const common = {
      schema: 1,
      txn: t.txn,
      rev: t.rev,
      op: t.op,
      item: this.stockKey.item,
      location: this.stockKey.location,
    };
    const body = t.op === 'post' ? { ...common, day: t.day, qty: t.qty } : common;
    return Buffer.from(canonicalJson(body), 'utf8');
  }
}

/** An endless generator of records over the configured keys (round-robin, one stream per key). */
export function* ledgerTraffic(options: TrafficOptions): Generator<TrafficRecord, never> {
  const random = mulberry32(options.seed);
  const streams = options.keys.map((k) => new KeyStream(k, options, random));
  for (let i = 0; ; i++) yield (streams[i % streams.length] as KeyStream).next();
}

/** The first `count` records of the traffic. */
export function ledgerBacklog(options: TrafficOptions, count: number): TrafficRecord[] {
  const out: TrafficRecord[] = [];
  const traffic = ledgerTraffic(options);
  for (let i = 0; i < count; i++) out.push(traffic.next().value);
  return out;
}
