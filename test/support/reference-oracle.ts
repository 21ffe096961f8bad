/**
 * The reference oracle (test-only; domain.md, verification.md): recomputes every decision
 * and the whole output version history from the full list of source records. The verifier
 * runs the fast one (src/verify/fast-oracle.ts); the tests hold the two against each other.
 *
 * Written apart from the incremental engine (decide.ts, ledger-state.ts) on purpose and
 * sharing only the decoders, text rules, canonical JSON and Kafka's murmur2 (its own reading of
 * which key is a stock key and where it belongs is `termsOf` below): after every APPLIED decision it rebuilds
 * S(K) from scratch from the authority map and diffs it against the previous S(K).
 * That costs O(transactions of the key) per APPLIED record: the price of obviousness.
 *
 * Configuration revisions (docs/design.md#configuration-revisions) are read here too, by its
 * own lookup (`inForce`), never the worker's config-revision.ts: each record is judged under the
 * newest revision whose position on its partition is at or before its offset, and a key takes
 * the terms in force until its first APPLIED decision binds them.
 */
import { canonicalJson, compareCodePoints } from '../../src/domain/canonical-json.js';
import type { NamespaceConfig } from '../../src/domain/config.js';
import type { Decision, Outcome } from '../../src/domain/decision.js';
import { decodeEnvelope, type Envelope } from '../../src/domain/envelope.js';
import { murmur2, toPositive } from '../../src/domain/murmur2.js';
import type { BalanceStatus, OutputVersion } from '../../src/domain/output-version.js';
import { decodeRecordKey } from '../../src/domain/record-key.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { isTextField } from '../../src/domain/text-rules.js';

export interface OracleResult {
  /** Ordered by (partition, offset). */
  decisions: Decision[];
  /** Ordered by (item, location, day, version), code-point string order. */
  versions: OutputVersion[];
}

interface Revision {
  rev: number;
  op: 'post' | 'cancel';
  day: string | undefined;
  qty: number | undefined;
}

/** A revision after the first, as this oracle needs it: where it starts, and its configuration. */
export interface ReferenceRevision {
  from: readonly number[];
  config: NamespaceConfig;
}

type Balances = Map<string, { closing: number; status: BalanceStatus }>;

/** A stock key's terms as domain.md §1 gives them. */
interface Terms {
  item: string;
  location: string;
  partition: number;
  opening: number;
  threshold: number;
}

interface KeyLedger {
  config: Terms;
  authority: Map<string, Revision>;
  /** S(K) after the latest APPLIED decision. */
  balances: Balances;
  /** Versions so far per day. */
  versionCounts: Map<string, number>;
}

/** The oracle's own copy of domain.md §4's "quarantined" column. */
const quarantine: Record<Outcome, boolean> = {
  MALFORMED: true,
  SCHEMA: true,
  KEY_MISMATCH: true,
  UNKNOWN_KEY: true,
  ROUTING: true,
  BEFORE_ORIGIN: true,
  STALE: false,
  DUPLICATE: false,
  CONFLICT: true,
  APPLIED: false,
};

/**
 * `records`: every record of every partition; each partition's records must have distinct offsets.
 * `revisions`: revisions 2… in order, `config` being revision 1.
 */
export function runOracle(
  config: NamespaceConfig,
  records: readonly SourceRecord[],
  revisions: readonly ReferenceRevision[] = [],
): OracleResult {
  const ordered = [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  for (let i = 1; i < ordered.length; i++) {
    const [prev, next] = [ordered[i - 1], ordered[i]];
    if (prev && next && prev.partition === next.partition && prev.offset === next.offset) {
      throw new Error(`oracle: two records at partition ${next.partition} offset ${next.offset}`);
    }
  }
  const ledgers = new Map<string, KeyLedger>();
  const decisions: Decision[] = [];
  const versions: OutputVersion[] = [];
  for (const record of ordered) {
    const { decision, created } = judge(inForce(config, revisions, record), ledgers, record);
    decisions.push(decision);
    versions.push(...created);
  }
  versions.sort(
    (a, b) =>
      compareCodePoints(a.item, b.item) ||
      compareCodePoints(a.location, b.location) ||
      compareCodePoints(a.day, b.day) ||
      a.version - b.version,
  );
  return { decisions, versions };
}

/**
 * domain.md §1: version 1 and the table list every key with its partition; murmur2 lists
 * overrides, takes the default rule for any other key whose strings follow §3, and routes by
 * Kafka's default partitioner over the canonical key JSON.
 */
function termsOf(config: NamespaceConfig, item: string, location: string): Terms | undefined {
  const listed = config.stock_keys.find((k) => k.item === item && k.location === location);
  if (config.schema_version === 1 || config.partitioner === 'table') return listed as Terms | undefined;
  const terms = listed ?? config.default_stock_key ?? undefined;
  if (terms === undefined || !isTextField(item) || !isTextField(location)) return undefined;
  const canonical = new TextEncoder().encode(canonicalJson({ location, item }));
  const partition = toPositive(murmur2(canonical)) % config.partitions;
  return { item, location, partition, opening: terms.opening, threshold: terms.threshold };
}

/** The configuration the record is judged under: the last revision listed that starts at or before it. */
function inForce(config: NamespaceConfig, revisions: readonly ReferenceRevision[], record: SourceRecord) {
  let found = config;
  for (const r of revisions) if ((r.from[record.partition] ?? 0) <= record.offset) found = r.config;
  return found;
}

/** The key's ledger; a key without authority takes `terms`, a key with authority must already have them. */
function ledgerOf(ledgers: Map<string, KeyLedger>, terms: Terms): KeyLedger {
  const id = JSON.stringify([terms.item, terms.location]);
  const ledger = ledgers.get(id) ?? {
    config: terms,
    authority: new Map(),
    balances: new Map(),
    versionCounts: new Map(),
  };
  ledgers.set(id, ledger);
  if (ledger.authority.size === 0) ledger.config = terms;
  const bound = ledger.config;
  if (bound.partition !== terms.partition || bound.opening !== terms.opening || bound.threshold !== terms.threshold) {
    throw new Error(`oracle: a revision changes the terms of ${terms.item}@${terms.location}, which has authority`);
  }
  return ledger;
}

function judge(
  config: NamespaceConfig,
  ledgers: Map<string, KeyLedger>,
  record: SourceRecord,
): { decision: Decision; created: OutputVersion[] } {
  const verdict = (outcome: Outcome, envelope: Envelope | null, detail: string) => ({
    decision: {
      partition: record.partition,
      offset: record.offset,
      outcome,
      item: envelope ? envelope.item : null,
      location: envelope ? envelope.location : null,
      txn: envelope ? envelope.txn : null,
      rev: envelope ? envelope.rev : null,
      quarantined: quarantine[outcome],
      detail: quarantine[outcome] ? detail : null,
    },
    created: [] as OutputVersion[],
  });

  // The envelope's own format version, 1 under either configuration version.
  const value = decodeEnvelope(record.value, 1);
  if (value.outcome === 'MALFORMED') return verdict('MALFORMED', null, value.detail);
  if (value.outcome === 'SCHEMA') return verdict('SCHEMA', null, value.detail);
  const envelope = value.envelope;

  const key = decodeRecordKey(record.key);
  if (!key.valid) return verdict('KEY_MISMATCH', envelope, key.reason);
  if (key.item !== envelope.item || key.location !== envelope.location) {
    return verdict('KEY_MISMATCH', envelope, 'record key and envelope name different stock keys');
  }
  const terms = termsOf(config, envelope.item, envelope.location);
  if (!terms) return verdict('UNKNOWN_KEY', envelope, 'stock key not configured');
  if (terms.partition !== record.partition) return verdict('ROUTING', envelope, 'record on the wrong partition');
  if (envelope.op === 'post' && envelope.day < config.ledger_origin) {
    return verdict('BEFORE_ORIGIN', envelope, 'post before the ledger origin');
  }
  const ledger = ledgerOf(ledgers, terms);

  const known = ledger.authority.get(envelope.txn);
  if (known && envelope.rev < known.rev) return verdict('STALE', envelope, '');
  if (known && envelope.rev === known.rev) {
    const same = known.op === envelope.op && known.day === envelope.day && known.qty === envelope.qty;
    return same ? verdict('DUPLICATE', envelope, '') : verdict('CONFLICT', envelope, 'same revision, other content');
  }

  ledger.authority.set(envelope.txn, { rev: envelope.rev, op: envelope.op, day: envelope.day, qty: envelope.qty });
  const before = ledger.balances;
  const after = balancesFromScratch(ledger);
  const applied = verdict('APPLIED', envelope, '');
  const days = [...new Set([...before.keys(), ...after.keys()])].sort(compareCodePoints);
  for (const day of days) {
    const was = before.get(day);
    const now = after.get(day);
    if (was && now && was.closing === now.closing && was.status === now.status) continue;
    const version = (ledger.versionCounts.get(day) ?? 0) + 1;
    ledger.versionCounts.set(day, version);
    applied.created.push({
      item: ledger.config.item,
      location: ledger.config.location,
      day,
      version,
      closing: now ? now.closing : null,
      status: now ? now.status : null,
      retracted: now === undefined,
      cause: { partition: record.partition, offset: record.offset },
    });
  }
  ledger.balances = after;
  return applied;
}

/**
 * S(K) from scratch (domain.md §5): closing(d) = opening + Σ qty of the authoritative posts
 * with day ≤ d, for every active day d — summed per day, then accumulated in day order.
 */
function balancesFromScratch(ledger: KeyLedger): Balances {
  const perDay = new Map<string, number>();
  for (const revision of ledger.authority.values()) {
    if (revision.op !== 'post' || revision.day === undefined || revision.qty === undefined) continue;
    perDay.set(revision.day, (perDay.get(revision.day) ?? 0) + revision.qty);
  }
  const balances: Balances = new Map();
  let closing = ledger.config.opening;
  for (const day of [...perDay.keys()].sort(compareCodePoints)) {
    closing += perDay.get(day) ?? 0;
    if (!Number.isSafeInteger(closing)) throw new RangeError(`oracle: closing on ${day} exceeds 2^53-1`);
    const status: BalanceStatus = closing < 0 ? 'NEGATIVE' : closing < ledger.config.threshold ? 'LOW' : 'OK';
    balances.set(day, { closing, status });
  }
  return balances;
}
