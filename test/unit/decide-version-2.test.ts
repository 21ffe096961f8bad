/**
 * Decisions under configuration version 2 (docs/design.md#configuration): the default rule,
 * overrides, Kafka's murmur2 partitioner over the canonical key bytes, and the table. Every
 * history runs through the engine and both oracles.
 *
 * Partitions come from Kafka's own Utils.murmur2 (test/vectors/KafkaPartitionVectors.java):
 * of 3 partitions, {"item":"widget","location":"berlin"} is on 0 and
 * {"item":"item-07","location":"loc-2"} on 1.
 */
import { describe, expect, it } from 'vitest';
import type { NamespaceConfig } from '../../src/domain/config.js';
import { murmur2Partition } from '../../src/domain/murmur2.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { runFastOracle, withoutDetail } from '../support/fast-oracle-run.js';
import { runOracle } from '../support/reference-oracle.js';
import { anyKeyConfig, bytes, comparable, keyText, runEngine, testConfig } from './ledger-test-kit.js';

const anyKey = anyKeyConfig;
const listedOnly: NamespaceConfig = { ...anyKey, default_stock_key: null } as NamespaceConfig;

function post(item: string, location: string, qty: number, txn = 'T1', schema = 1): Uint8Array {
  return bytes(JSON.stringify({ schema, txn, rev: 1, op: 'post', item, location, day: '2026-03-02', qty }));
}

const at = (partition: number, offset: number, key: Uint8Array, value: Uint8Array): SourceRecord => ({
  partition,
  offset,
  key,
  value,
});

/** The engine's result, after checking both oracles say the same. */
function decideAll(config: NamespaceConfig, records: SourceRecord[]) {
  const engine = runEngine(config, records);
  const reference = runOracle(config, records);
  expect(comparable(engine.decisions)).toEqual(comparable(reference.decisions));
  expect(engine.versions).toEqual(reference.versions);
  const fast = runFastOracle(config, records);
  expect(fast.decisions).toEqual(reference.decisions.map(withoutDetail));
  expect(fast.versions).toEqual(reference.versions);
  return engine;
}

describe('the default rule and murmur2', () => {
  it('decides a key never listed with the default terms, on the partition murmur2 gives', () => {
    const run = decideAll(anyKey, [at(1, 0, bytes(keyText('item-07', 'loc-2')), post('item-07', 'loc-2', 3))]);
    expect(run.decisions.map((d) => d.outcome)).toEqual(['APPLIED']);
    expect(run.versions.map((v) => [v.item, v.closing, v.status, v.cause.partition])).toEqual([
      ['item-07', 3, 'LOW', 1],
    ]);
  });

  it("takes an override's terms over the default rule", () => {
    const run = decideAll(anyKey, [at(0, 0, bytes(keyText()), post('widget', 'berlin', -85))]);
    // 100 - 85 = 15: LOW under the override's threshold 20 (the default's 5 would say OK).
    expect(run.versions.map((v) => [v.closing, v.status])).toEqual([[15, 'LOW']]);
  });

  it('quarantines a record off its murmur2 partition as ROUTING, naming the partition', () => {
    const run = decideAll(anyKey, [
      at(2, 0, bytes(keyText('item-07', 'loc-2')), post('item-07', 'loc-2', 3)),
      at(1, 0, bytes(keyText()), post('widget', 'berlin', 1)),
    ]);
    expect(run.decisions.map((d) => [d.outcome, d.detail])).toEqual([
      [
        'ROUTING',
        '("widget", "berlin") maps to partition 0 (Kafka\'s murmur2 partitioner over the canonical key bytes), not 1',
      ],
      [
        'ROUTING',
        '("item-07", "loc-2") maps to partition 1 (Kafka\'s murmur2 partitioner over the canonical key bytes), not 2',
      ],
    ]);
  });

  it('routes a valid but non-canonical key by its canonical bytes, never its own', () => {
    const raw = bytes('{ "location": "loc-2",  "item": "item-07" }');
    const own = murmur2Partition(raw, 3);
    expect(own).not.toBe(1); // else this test could not tell the two apart
    const run = decideAll(anyKey, [
      at(1, 0, raw, post('item-07', 'loc-2', 3)),
      at(own, 0, raw, post('item-07', 'loc-2', 4, 'T2')),
    ]);
    expect(run.decisions.map((d) => [d.partition, d.outcome])).toEqual(
      [
        [1, 'APPLIED'],
        [own, 'ROUTING'],
      ].sort((a, b) => (a[0] as number) - (b[0] as number)),
    );
  });

  it('without a default rule, a key never listed is UNKNOWN_KEY and overrides still route by murmur2', () => {
    const run = decideAll(listedOnly, [
      at(0, 0, bytes(keyText()), post('widget', 'berlin', 1)),
      at(1, 0, bytes(keyText('item-07', 'loc-2')), post('item-07', 'loc-2', 3)),
    ]);
    expect(run.decisions.map((d) => d.outcome)).toEqual(['APPLIED', 'UNKNOWN_KEY']);
  });

  it('takes envelope schema 1 under configuration version 2, and refuses schema 2 as SCHEMA', () => {
    const run = decideAll(anyKey, [
      at(0, 0, bytes(keyText()), post('widget', 'berlin', 1, 'T1', 1)),
      at(0, 1, bytes(keyText()), post('widget', 'berlin', 1, 'T2', 2)),
    ]);
    expect(run.decisions.map((d) => d.outcome)).toEqual(['APPLIED', 'SCHEMA']);
  });
});

describe('version 2 with the table', () => {
  it('decides exactly as version 1 with the same keys', () => {
    const table: NamespaceConfig = { ...testConfig, schema_version: 2, partitioner: 'table' };
    const records = [
      at(0, 0, bytes(keyText()), post('widget', 'berlin', -30)),
      at(1, 0, bytes(keyText()), post('widget', 'berlin', 1)),
      at(1, 1, bytes(keyText('gadget', 'paris')), post('gadget', 'paris', 2)),
      at(0, 1, bytes(keyText('ghost', 'nowhere')), post('ghost', 'nowhere', 2)),
    ];
    const v1 = decideAll(testConfig, records);
    expect(decideAll(table, records)).toEqual(v1);
    expect(v1.decisions.map((d) => d.outcome)).toEqual(['APPLIED', 'UNKNOWN_KEY', 'ROUTING', 'APPLIED']);
  });
});
