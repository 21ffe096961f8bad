/**
 * Random configurations and source histories for the property tests that hold the worker's
 * engine against the oracles (engine-vs-oracle.property.test.ts): several keys (some never
 * listed), misrouted records, key mismatches, garbage bytes, schema failures, corrections,
 * cancels, redeliveries (also re-encoded), stale revisions, conflicts, days before the origin,
 * offset gaps; keys written canonically or not.
 *
 * Configurations (domain.md §1): version 1; version 2 with the table; version 2 with Kafka's
 * murmur2 partitioner, random overrides, with or without a default rule. Every history has
 * two partitions.
 */
import fc from 'fast-check';
import { canonicalJson } from '../../src/domain/canonical-json.js';
import {
  type Murmur2ConfigV2,
  type NamespaceConfig,
  type NamespaceConfigV1,
  parseNamespaceConfig,
  type TableConfigV2,
} from '../../src/domain/config.js';
import { murmur2Partition } from '../../src/domain/murmur2.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { bytes } from './ledger-test-kit.js';

/** A key a record may name, and the partition it belongs on (or would, were it a stock key). */
interface KeyDraw {
  item: string;
  location: string;
  partition: number;
}

export const v1Config = parseNamespaceConfig({
  namespace: 'property-test',
  schema_version: 1,
  ledger_origin: '2026-03-01',
  partitions: 2,
  stock_keys: [
    { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
    { item: 'bolt', location: 'berlin', partition: 0, opening: -5, threshold: 0 },
    { item: 'gadget', location: 'paris', partition: 1, opening: 0, threshold: 5 },
  ],
  source_incarnation: `kafka:${'a'.repeat(32)}`,
}) as NamespaceConfigV1;

/** Never listed: UNKNOWN_KEY without a default rule, stock keys with one. */
export const unlistedKeys = [
  { item: 'ghost', location: 'nowhere' },
  { item: 'drifter', location: 'berlin' },
  { item: 'widget', location: 'paris' },
];

export const termsArb = fc.record({
  opening: fc.integer({ min: -50, max: 120 }),
  threshold: fc.integer({ min: -5, max: 40 }),
});

const murmur2ConfigArb: fc.Arbitrary<Murmur2ConfigV2> = fc
  .record({
    overrides: fc.subarray(v1Config.stock_keys),
    terms: fc.array(termsArb, { minLength: 3, maxLength: 3 }),
    rule: fc.option(termsArb, { nil: null }),
  })
  .map(({ overrides, terms, rule }) => ({
    ...v1Config,
    schema_version: 2,
    partitioner: 'murmur2',
    default_stock_key: rule,
    stock_keys: overrides.map((k, i) => ({
      item: k.item,
      location: k.location,
      ...(terms[i] as { opening: number; threshold: number }),
    })),
  }));

const tableConfig: TableConfigV2 = { ...v1Config, schema_version: 2, partitioner: 'table' };

export const configArb: fc.Arbitrary<NamespaceConfig> = fc.oneof(fc.constant(v1Config), fc.constant(tableConfig), {
  arbitrary: murmur2ConfigArb,
  weight: 3,
});

/** Where the test expects a key: its listed partition, else Kafka's partitioner over its canonical JSON. */
function expectedPartition(config: NamespaceConfig, item: string, location: string): number {
  if (config.schema_version === 1 || config.partitioner === 'table') {
    return config.stock_keys.find((k) => k.item === item && k.location === location)?.partition ?? 1;
  }
  return murmur2Partition(bytes(canonicalJson({ item, location })), config.partitions);
}

function isStockKey(config: NamespaceConfig, k: { item: string; location: string }): boolean {
  const listed = config.stock_keys.some((l) => l.item === k.item && l.location === k.location);
  return listed || (config.schema_version === 2 && config.partitioner === 'murmur2' && !!config.default_stock_key);
}

/** Listed keys twice, so the unlisted ones are not too frequent. */
function keyPool(config: NamespaceConfig): KeyDraw[] {
  const names = [...v1Config.stock_keys, ...v1Config.stock_keys, ...unlistedKeys];
  return names.map(({ item, location }) => ({ item, location, partition: expectedPartition(config, item, location) }));
}

const days = ['2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03', '2026-03-05', '2026-03-10'];

/** A record before it gets an offset. */
interface Template {
  partition: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

export const envelopeFieldArbs = {
  txn: fc.constantFrom('T1', 'T2', 'T3', 'T4', 'T5'),
  rev: fc.integer({ min: 1, max: 3 }),
  op: fc.constantFrom('post', 'post', 'cancel'),
  day: fc.constantFrom(...days),
  // Mostly a few round quantities, so that corrections often change nothing, changes offset
  // each other, and closings land exactly on thresholds and zero.
  qty: fc.oneof(
    { arbitrary: fc.constantFrom(-40, -25, -20, -5, 0, 5, 20), weight: 4 },
    fc.integer({ min: -60, max: 60 }),
  ),
};
const envelopeArb = fc.record(envelopeFieldArbs);
type EnvelopeFields = typeof envelopeArb extends fc.Arbitrary<infer T> ? T : never;

/** The same envelope in different byte forms: the decision must not depend on the form. */
function envelopeBytes(item: string, location: string, e: EnvelopeFields, style: number): Uint8Array {
  const body: Record<string, unknown> =
    e.op === 'post'
      ? { schema: 1, txn: e.txn, rev: e.rev, op: e.op, item, location, day: e.day, qty: e.qty }
      : { schema: 1, txn: e.txn, rev: e.rev, op: e.op, item, location };
  if (style === 1) return bytes(JSON.stringify(body, null, 2));
  if (style === 2) return bytes(JSON.stringify(Object.fromEntries(Object.entries(body).reverse())));
  return bytes(JSON.stringify(body));
}

/** The key canonically (style 0) or not: members reversed, or spaced. Routing must follow the canonical form. */
function keyBytes(item: string, location: string, style = 0): Uint8Array {
  if (style === 1) return bytes(JSON.stringify({ location, item }));
  if (style === 2) return bytes(`{ "item" : ${JSON.stringify(item)} ,\n "location":${JSON.stringify(location)} }`);
  return bytes(JSON.stringify({ item, location }));
}

function wellFormedArb(pool: KeyDraw[]): fc.Arbitrary<Template> {
  return fc
    .record({
      key: fc.constantFrom(...pool),
      envelope: envelopeArb,
      style: fc.integer({ min: 0, max: 2 }),
      keyStyle: fc.integer({ min: 0, max: 5 }).map((n) => Math.max(0, n - 3)),
      misrouted: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    })
    .map(({ key, envelope, style, keyStyle, misrouted }) => ({
      partition: misrouted ? 1 - key.partition : key.partition,
      key: keyBytes(key.item, key.location, keyStyle),
      value: envelopeBytes(key.item, key.location, envelope, style),
    }));
}

const invalidKeyArb = fc.oneof(
  fc.constant(null),
  fc.constant(bytes()),
  fc.constant(bytes('{"Item":"widget","location":"berlin"}')),
  fc.constant(bytes([0xef, 0xbb, 0xbf], '{"item":"widget","location":"berlin"}')),
  fc.uint8Array({ maxLength: 12 }),
);

function keyMismatchArb(pool: KeyDraw[]): fc.Arbitrary<Template> {
  return fc
    .record({
      envelopeKey: fc.constantFrom(...pool),
      otherKey: fc.constantFrom(...pool),
      invalidKey: invalidKeyArb,
      useInvalid: fc.boolean(),
      envelope: envelopeArb,
    })
    .map(({ envelopeKey, otherKey, invalidKey, useInvalid, envelope }) => ({
      partition: envelopeKey.partition,
      key: useInvalid ? invalidKey : keyBytes(otherKey.item, otherKey.location),
      value: envelopeBytes(envelopeKey.item, envelopeKey.location, envelope, 0),
    }));
}

const brokenValues = [
  '{"schema":1,"txn":"T1","rev":0,"op":"post","item":"widget","location":"berlin","day":"2026-03-02","qty":1}',
  '{"schema":1,"txn":"T1","rev":1.0,"op":"post","item":"widget","location":"berlin","day":"2026-03-02","qty":1}',
  '{"schema":1,"txn":"T2","rev":2,"op":"cancel","item":"widget","location":"berlin","qty":1}',
  '{"schema":1,"txn":"T1","rev":1,"op":"post","item":"widget","location":"berlin","day":"2026-03-02","qty":1,"qty":1}',
  '{"schema":1,"txn":"T1","rev":3,"op":"post","item":"widget","location":"berlin","day":"2026-03-02","qty":5} x',
  // The configuration's version is not the envelope's: schema 2 is a SCHEMA failure under either.
  '{"schema":2,"txn":"T1","rev":1,"op":"post","item":"widget","location":"berlin","day":"2026-03-02","qty":1}',
];

function brokenValueArb(pool: KeyDraw[]): fc.Arbitrary<Template> {
  return fc
    .record({
      key: fc.constantFrom(...pool),
      value: fc.oneof(
        fc.constant(null),
        fc.uint8Array({ maxLength: 16 }),
        fc.constantFrom(...brokenValues).map((s) => bytes(s)),
      ),
      partition: fc.integer({ min: 0, max: 1 }),
    })
    .map(({ key, value, partition }) => ({ partition, key: keyBytes(key.item, key.location), value }));
}

/** Numbers templates per partition, in order, with occasional offset gaps. */
function numbered(templates: readonly { template: Template; gap: boolean }[]): SourceRecord[] {
  const next = [0, 0];
  return templates.map(({ template: t, gap }) => {
    const offset = (next[t.partition] ?? 0) + (gap ? 1 : 0);
    next[t.partition] = offset + 1;
    return { partition: t.partition, offset, key: t.key, value: t.value };
  });
}

/** Everything mixed: templates picked with repetition (redeliveries, also of garbage). */
function mixedHistoryArb(pool: KeyDraw[]): fc.Arbitrary<SourceRecord[]> {
  const templateArb: fc.Arbitrary<Template> = fc.oneof(
    { arbitrary: wellFormedArb(pool), weight: 12 },
    { arbitrary: keyMismatchArb(pool), weight: 1 },
    { arbitrary: brokenValueArb(pool), weight: 2 },
  );
  return fc
    .record({
      templates: fc.array(templateArb, { minLength: 1, maxLength: 30, size: 'medium' }),
      picks: fc.array(fc.record({ index: fc.nat(), gap: fc.integer({ min: 0, max: 9 }) }), {
        maxLength: 80,
        size: 'max',
      }),
    })
    .map(({ templates, picks }) =>
      numbered(
        picks.map(({ index, gap }) => ({ template: templates[index % templates.length] as Template, gap: gap === 0 })),
      ),
    );
}

/** Well-formed records of stock keys only, with more revisions: corrections, cancels, re-activations. */
function ledgerHistoryArb(stockKeys: KeyDraw[]): fc.Arbitrary<SourceRecord[]> {
  if (stockKeys.length === 0) return fc.constant([]);
  return fc
    .array(
      fc.record({
        key: fc.constantFrom(...stockKeys),
        envelope: fc.record({ ...envelopeFieldArbs, rev: fc.integer({ min: 1, max: 6 }) }),
        style: fc.integer({ min: 0, max: 2 }),
      }),
      { maxLength: 60, size: 'max' },
    )
    .map((entries) =>
      numbered(
        entries.map(({ key, envelope, style }) => ({
          template: {
            partition: key.partition,
            key: keyBytes(key.item, key.location),
            value: envelopeBytes(key.item, key.location, envelope, style),
          },
          gap: false,
        })),
      ),
    );
}

/** A random history of `config`'s namespace. */
export function historyArb(config: NamespaceConfig): fc.Arbitrary<SourceRecord[]> {
  const pool = keyPool(config);
  return fc.oneof(mixedHistoryArb(pool), ledgerHistoryArb(pool.filter((k) => isStockKey(config, k))));
}

export interface Scenario {
  config: NamespaceConfig;
  records: SourceRecord[];
}

/** A configuration of any version and a random history of it. */
export const scenarioArb: fc.Arbitrary<Scenario> = configArb.chain((config) =>
  historyArb(config).map((records) => ({ config, records })),
);
