/**
 * The verifier's fast oracle and its own decoders (src/verify) against the references
 * (issue 14): the fast oracle equals the reference oracle (test/support/reference-oracle.ts)
 * on the fixtures and on random ledgers whose days arrive in any order (so days are
 * inserted before the last one, and corrections move posts between days); the oracle's key
 * and envelope decoders agree with the worker's on random bytes, random JSON-like text and
 * mutations of valid records. (The raw-byte table is in raw-byte-cases.test.ts.)
 *
 * Replay a failure with AMENDS_FC_SEED=<seed> AMENDS_FC_PATH=<path>.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type NamespaceConfig,
  type NamespaceConfigV1,
  parseConfigFile,
  parseNamespaceConfig,
} from '../../src/domain/config.js';
import { decodeEnvelope } from '../../src/domain/envelope.js';
import { decodeRecordKey } from '../../src/domain/record-key.js';
import { parseSimulationInput } from '../../src/domain/simulation-input.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { type StockKeyTerms, stockKeyTerms } from '../../src/domain/stock-key-terms.js';
import { decodeOracleKey, decodeOracleValue } from '../../src/verify/oracle-decoder.js';
import { runFastOracle, withoutDetail } from '../support/fast-oracle-run.js';
import { runOracle } from '../support/reference-oracle.js';
import { anyKeyConfig } from './ledger-test-kit.js';
import { fixture } from './worked-example-kit.js';

const fcParameters = {
  seed: process.env.AMENDS_FC_SEED === undefined ? undefined : Number(process.env.AMENDS_FC_SEED),
  path: process.env.AMENDS_FC_PATH,
};

const config = parseNamespaceConfig({
  namespace: 'fast-oracle-test',
  schema_version: 1,
  ledger_origin: '2026-03-01',
  partitions: 2,
  stock_keys: [
    { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
    { item: 'gadget', location: 'paris', partition: 1, opening: -3, threshold: 0 },
  ],
  source_incarnation: `kafka:${'c'.repeat(32)}`,
}) as NamespaceConfigV1;

const anyKeys = ['widget', 'gadget', 'sprocket', 'item ✓'].flatMap((item) =>
  ['berlin', 'paris'].map((location) => stockKeyTerms(anyKeyConfig, item, location) as StockKeyTerms),
);

const enc = new TextEncoder();
const day = (n: number) => `2026-03-${String(n).padStart(2, '0')}`;

/** Ledgers of `keys`: transactions posted on days in any order, corrected, cancelled, re-posted. */
const ledgerArb = (
  keys: readonly { item: string; location: string; partition: number }[],
): fc.Arbitrary<SourceRecord[]> =>
  fc
    .array(
      fc.record({
        key: fc.constantFrom(...keys),
        txn: fc.integer({ min: 1, max: 25 }),
        rev: fc.integer({ min: 1, max: 8 }),
        cancel: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
        day: fc.integer({ min: 1, max: 31 }),
        qty: fc.oneof(fc.constant(0), fc.integer({ min: -60, max: 60 })),
      }),
      { maxLength: 200, size: 'max' },
    )
    .map((entries) => {
      const next = [0, 0, 0];
      return entries.map((e) => {
        const body = e.cancel ? {} : { day: day(e.day), qty: e.qty };
        const envelope = {
          schema: 1,
          txn: `T${e.txn}`,
          rev: e.rev,
          op: e.cancel ? 'cancel' : 'post',
          item: e.key.item,
          location: e.key.location,
          ...body,
        };
        const offset = next[e.key.partition] ?? 0;
        next[e.key.partition] = offset + 1;
        return {
          partition: e.key.partition,
          offset,
          key: enc.encode(JSON.stringify({ item: e.key.item, location: e.key.location })),
          value: enc.encode(JSON.stringify(envelope)),
        };
      });
    });

function expectSameOracles(c: NamespaceConfig, records: readonly SourceRecord[]): void {
  const reference = runOracle(c, records);
  const fast = runFastOracle(c, records);
  expect(fast.decisions).toEqual(reference.decisions.map(withoutDetail));
  expect(fast.versions).toEqual(reference.versions);
}

describe('fast oracle = reference oracle', () => {
  it('on every fixture, alone and together', () => {
    const twoKeys = parseNamespaceConfig({
      namespace: 'fast-oracle-fixtures',
      partitions: 2,
      source_incarnation: `kafka:${'d'.repeat(32)}`,
      ...parseConfigFile(JSON.parse(fixture('two-keys.config.json')), 2),
    });
    const files = ['before.jsonl', 'second-key.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'];
    for (const file of files) expectSameOracles(twoKeys, parseSimulationInput(fixture(file), twoKeys));
    const all = parseSimulationInput(files.map(fixture).join(''), twoKeys);
    expect(runFastOracle(twoKeys, all).versions.length).toBeGreaterThan(10);
    expectSameOracles(twoKeys, all);
  });

  it('on random ledgers with days in any order', () => {
    fc.assert(
      fc.property(ledgerArb(config.stock_keys), (records) => expectSameOracles(config, records)),
      { numRuns: 300, ...fcParameters },
    );
  });

  it("on random ledgers of keys never listed, under a default rule and Kafka's partitioner", () => {
    fc.assert(
      fc.property(ledgerArb(anyKeys), (records) => expectSameOracles(anyKeyConfig, records)),
      { numRuns: 200, ...fcParameters },
    );
  });
});

/** What a decoder says, in one comparable shape. */
function keyVerdicts(bytes: Uint8Array | null) {
  const worker = decodeRecordKey(bytes);
  const oracle = decodeOracleKey(bytes);
  return {
    worker: worker.valid ? { item: worker.item, location: worker.location } : 'invalid',
    oracle: oracle.valid ? { item: oracle.item, location: oracle.location } : 'invalid',
  };
}

function valueVerdicts(bytes: Uint8Array | null) {
  const worker = decodeEnvelope(bytes, 1);
  const oracle = decodeOracleValue(bytes, 1);
  const shape = (e: {
    txn: string;
    rev: number;
    op: string;
    item: string;
    location: string;
    day?: string;
    qty?: number;
  }) => ({
    txn: e.txn,
    rev: e.rev,
    op: e.op,
    item: e.item,
    location: e.location,
    day: e.day,
    qty: e.qty,
  });
  return {
    worker: worker.outcome === 'ok' ? shape(worker.envelope) : worker.outcome,
    oracle: oracle.outcome === 'ok' ? shape(oracle.envelope) : oracle.outcome,
  };
}

/** JSON-like text from the pieces the rules are about. */
const jsonishArb = fc
  .array(
    fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      ' ',
      '\t',
      '\n',
      '"',
      '\\',
      '\\u',
      'd800',
      'dc00',
      '0041',
      '\\"',
      '\u0001',
      '\ufeff',
      '"item"',
      '"location"',
      '"it\\u0065m"',
      '"txn"',
      '"T1"',
      '"rev"',
      '"op"',
      '"post"',
      '"cancel"',
      '"day"',
      '"2026-03-02"',
      '"2026-02-30"',
      '"qty"',
      '"schema"',
      '1',
      '-0',
      '0',
      '01',
      '1.0',
      '1e2',
      '-',
      '2147483648',
      'true',
      'null',
      '"widget"',
      '"berlin"',
      '"😀"',
      '"\u0085"',
    ),
    { maxLength: 40 },
  )
  .map((pieces) => enc.encode(pieces.join('')));

const validEnvelopes = [
  '{"schema":1,"txn":"T1","rev":1,"op":"post","item":"widget","location":"berlin","day":"2026-03-02","qty":-30}',
  '{"schema":1,"txn":"T2","rev":2,"op":"cancel","item":"widget","location":"berlin"}',
  ' { "qty" : 0 , "day" : "2024-02-29" , "op" : "post" , "rev" : 2147483647 , "txn" : "a.b:c-d_e" , "item" : "w\\u00e9" , "location" : "\\ud83d\\ude00" , "schema" : 1 } ',
];
const validKeys = ['{"item":"widget","location":"berlin"}', ' {"location":"b\\u0065rlin" , "item":"😀"} '];

/** A valid text with a few bytes changed, inserted or removed. */
function mutatedArb(texts: readonly string[]): fc.Arbitrary<Uint8Array> {
  const edit = fc.record({
    at: fc.nat(),
    kind: fc.integer({ min: 0, max: 2 }),
    byte: fc.integer({ min: 0, max: 255 }),
  });
  return fc
    .record({ text: fc.constantFrom(...texts), edits: fc.array(edit, { minLength: 1, maxLength: 3 }) })
    .map(({ text, edits }) => {
      const bytes = [...enc.encode(text)];
      for (const { at, kind, byte } of edits) {
        const i = at % (bytes.length + 1);
        if (kind === 0) bytes.splice(i, 1, byte);
        else if (kind === 1) bytes.splice(i, 0, byte);
        else bytes.splice(i, 1);
      }
      return Uint8Array.from(bytes);
    });
}

/** A valid text changed by one rule of domain.md §2–§3: a BOM, a repeated member, a member added, deep nesting. */
function ruleBreakArb(texts: readonly string[]): fc.Arbitrary<Uint8Array> {
  const member = fc.constantFrom(
    '"item":"x"',
    '"location":"y"',
    '"txn":"T9"',
    '"it\\u0065m":"x"',
    '"extra":[[[1]]]',
    '"qty":1',
  );
  return fc
    .record({
      text: fc.constantFrom(...texts),
      change: fc.integer({ min: 0, max: 2 }),
      member,
      depth: fc.integer({ min: 60, max: 70 }),
    })
    .map(({ text, change, member, depth }) => {
      const at = text.indexOf('{') + 1;
      if (change === 0) return enc.encode(`\ufeff${text}`);
      if (change === 1) return enc.encode(`${text.slice(0, at)}${member},${text.slice(at)}`);
      const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      return enc.encode(`${text.slice(0, at)}"deep":${nested},${text.slice(at)}`);
    });
}

describe("the oracle's decoders agree with the worker's", () => {
  const bytesArb = fc.oneof(
    ruleBreakArb(validEnvelopes),
    ruleBreakArb(validKeys),
    fc.uint8Array({ maxLength: 60 }),
    jsonishArb,
    mutatedArb(validEnvelopes),
    mutatedArb(validKeys),
    fc.constantFrom(...[...validEnvelopes, ...validKeys].map((t) => enc.encode(t))),
    fc.constant(null),
  );

  it('on keys', () => {
    fc.assert(
      fc.property(bytesArb, (bytes) => {
        const v = keyVerdicts(bytes);
        expect(v.oracle).toEqual(v.worker);
      }),
      { numRuns: 5_000, ...fcParameters },
    );
  });

  it('on values', () => {
    fc.assert(
      fc.property(bytesArb, (bytes) => {
        const v = valueVerdicts(bytes);
        expect(v.oracle).toEqual(v.worker);
      }),
      { numRuns: 5_000, ...fcParameters },
    );
  });

  it('the generators reach valid and invalid keys and every value outcome (fixed seed: not vacuous)', () => {
    const samples = fc.sample(bytesArb, { numRuns: 3_000, seed: 14 });
    const keys = new Set(samples.map((b) => decodeOracleKey(b).valid));
    const values = new Set(samples.map((b) => decodeOracleValue(b, 1).outcome));
    expect([...keys].sort()).toEqual([false, true]);
    expect([...values].sort()).toEqual(['MALFORMED', 'SCHEMA', 'ok']);
  });
});
