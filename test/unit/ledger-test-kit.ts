/**
 * Shared builders for the domain tests: a test configuration, byte helpers, envelope and
 * key texts, and a runner that collects the incremental engine's results in export order.
 */
import { type NamespaceConfig, type NamespaceConfigV1, parseNamespaceConfig } from '../../src/domain/config.js';
import { decideBatch } from '../../src/domain/decide.js';
import type { Decision } from '../../src/domain/decision.js';
import { sortDecisions, sortOutputVersions } from '../../src/domain/export-lines.js';
import type { LedgerState } from '../../src/domain/ledger-state.js';
import type { OutputVersion } from '../../src/domain/output-version.js';
import type { SourceRecord } from '../../src/domain/source-record.js';

export const astralItem = '😀'.repeat(64);

/** widget@berlin on partition 0 (the fixtures' key), gadget@paris on 1, a 64-emoji item on 0. */
export const testConfig = parseNamespaceConfig({
  namespace: 'domain-test',
  schema_version: 1,
  ledger_origin: '2026-03-01',
  partitions: 2,
  stock_keys: [
    { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
    { item: 'gadget', location: 'paris', partition: 1, opening: 0, threshold: 5 },
    { item: astralItem, location: 'lager', partition: 0, opening: -10, threshold: 0 },
  ],
  source_incarnation: `kafka:${'0f3c'.repeat(8)}`,
}) as NamespaceConfigV1;

/**
 * Version 2: Kafka's murmur2 partitioner on 3 partitions, widget@berlin listed as an override,
 * a default rule for every other key.
 */
export const anyKeyConfig: NamespaceConfig = parseNamespaceConfig({
  namespace: 'v2-test',
  schema_version: 2,
  ledger_origin: '2026-03-01',
  partitions: 3,
  partitioner: 'murmur2',
  default_stock_key: { opening: 0, threshold: 5 },
  stock_keys: [{ item: 'widget', location: 'berlin', opening: 100, threshold: 20 }],
  source_incarnation: `kafka:${'0f3c'.repeat(8)}`,
});

/** Concatenates UTF-8 text and raw byte values into one Uint8Array. */
export function bytes(...parts: (string | number[])[]): Uint8Array {
  return new Uint8Array(
    Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p)))),
  );
}

export function keyText(item = 'widget', location = 'berlin'): string {
  return JSON.stringify({ item, location });
}

type Members = [name: string, rawJson: string][];

const postMembers: Members = [
  ['schema', '1'],
  ['txn', '"T1"'],
  ['rev', '1'],
  ['op', '"post"'],
  ['item', '"widget"'],
  ['location', '"berlin"'],
  ['day', '"2026-03-02"'],
  ['qty', '-30'],
];

/**
 * The text of a valid post envelope with members replaced by raw JSON text (`undefined`
 * removes a member); `extra` raw `"name":value` fragments are appended as written.
 */
export function postText(changes: Record<string, string | undefined> = {}, extra: string[] = []): string {
  return membersText(postMembers, changes, extra);
}

export function cancelText(changes: Record<string, string | undefined> = {}, extra: string[] = []): string {
  return membersText(
    postMembers.filter(([n]) => n !== 'day' && n !== 'qty').map(([n, v]) => (n === 'op' ? [n, '"cancel"'] : [n, v])),
    changes,
    extra,
  );
}

function membersText(base: Members, changes: Record<string, string | undefined>, extra: string[]): string {
  const members: Members = [];
  for (const [name, raw] of base) {
    if (!(name in changes)) members.push([name, raw]);
    else if (changes[name] !== undefined) members.push([name, changes[name] as string]);
  }
  return `{${[...members.map(([n, v]) => `${JSON.stringify(n)}:${v}`), ...extra].join(',')}}`;
}

export interface EnvelopeFields {
  txn: string;
  rev: number;
  op?: 'post' | 'cancel';
  item?: string;
  location?: string;
  day?: string;
  qty?: number;
}

/** A well-formed record for (item, location), routed to `partition` (default: its mapping). */
export function ledgerRecord(offset: number, f: EnvelopeFields, partition?: number): SourceRecord {
  const item = f.item ?? 'widget';
  const location = f.location ?? 'berlin';
  const op = f.op ?? 'post';
  const envelope =
    op === 'post'
      ? { schema: 1, txn: f.txn, rev: f.rev, op, item, location, day: f.day, qty: f.qty }
      : { schema: 1, txn: f.txn, rev: f.rev, op, item, location };
  const mapped = testConfig.stock_keys.find((k) => k.item === item && k.location === location)?.partition ?? 0;
  return {
    partition: partition ?? mapped,
    offset,
    key: bytes(keyText(item, location)),
    value: bytes(JSON.stringify(envelope)),
  };
}

export interface EngineRun {
  decisions: Decision[];
  versions: OutputVersion[];
}

export function runEngine(config: NamespaceConfig, records: readonly SourceRecord[], state: LedgerState = new Map()) {
  const decisions: Decision[] = [];
  const versions: OutputVersion[] = [];
  for (const r of decideBatch(records, config, state)) {
    decisions.push(r.decision);
    versions.push(...r.newVersions);
  }
  return { decisions: sortDecisions(decisions), versions: sortOutputVersions(versions) };
}

/** Decisions without their free-text detail (only whether one exists), for comparisons. */
export function comparable(decisions: readonly Decision[]) {
  return decisions.map((d) => ({ ...d, detail: d.detail === null ? null : 'detail' }));
}
