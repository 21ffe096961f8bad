/** transport.md Export line formats and orders; domain.md §6 output topic records. */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/domain/canonical-json.js';
import { configDigest, type NamespaceConfig } from '../../src/domain/config.js';
import { baseChain, nextRevision, revisionDigest } from '../../src/domain/config-revision.js';
import type { Decision } from '../../src/domain/decision.js';
import {
  decisionLine,
  outputLine,
  outputRecordKey,
  outputRecordValue,
  quarantineLine,
  revisionLines,
  sortDecisions,
  sortOutputVersions,
  viewLine,
} from '../../src/domain/export-lines.js';
import type { OutputVersion } from '../../src/domain/output-version.js';

const duplicate: Decision = {
  partition: 0,
  offset: 5,
  outcome: 'DUPLICATE',
  item: 'widget',
  location: 'berlin',
  txn: 'T2',
  rev: 1,
  quarantined: false,
  detail: null,
};

const version: OutputVersion = {
  item: 'widget',
  location: 'berlin',
  day: '2026-03-05',
  version: 3,
  closing: 20,
  status: 'OK',
  retracted: false,
  cause: { partition: 0, offset: 6 },
};

describe('export lines', () => {
  it('renders a decision line with members in the documented order', () => {
    expect(decisionLine(duplicate)).toBe(
      '{"type":"decision","partition":0,"offset":5,"outcome":"DUPLICATE","item":"widget","location":"berlin","txn":"T2","rev":1}',
    );
    const malformed: Decision = {
      ...duplicate,
      outcome: 'MALFORMED',
      item: null,
      location: null,
      txn: null,
      rev: null,
    };
    expect(decisionLine(malformed)).toBe(
      '{"type":"decision","partition":0,"offset":5,"outcome":"MALFORMED","item":null,"location":null,"txn":null,"rev":null}',
    );
  });

  it('renders output and view lines', () => {
    const body =
      '"item":"widget","location":"berlin","day":"2026-03-05","version":3,"closing":20,"status":"OK","retracted":false,"cause":{"partition":0,"offset":6}}';
    expect(outputLine(version)).toBe(`{"type":"output",${body}`);
    expect(viewLine(version)).toBe(`{"type":"view",${body}`);
  });

  it('renders a quarantine line with raw bytes in standard base64', () => {
    const d: Decision = { ...duplicate, outcome: 'MALFORMED', item: null, location: null, txn: null, rev: null };
    const line = quarantineLine(
      { ...d, quarantined: true, detail: 'null value' },
      {
        key: new Uint8Array([0xfb, 0xff]),
        value: null,
      },
    );
    expect(line).toBe(
      '{"type":"quarantine","partition":0,"offset":5,"outcome":"MALFORMED","item":null,"location":null,"txn":null,"rev":null,"key_b64":"+/8=","value_b64":null,"detail":"null value"}',
    );
  });

  it('escapes strings as JSON.stringify does', () => {
    expect(decisionLine({ ...duplicate, item: 'a"b\\c\u007f\u2028😀' })).toContain('"item":"a\\"b\\\\c\u007f\u2028😀"');
  });

  it('orders decisions by (partition, offset) numerically', () => {
    const ds = [
      { ...duplicate, partition: 1, offset: 0 },
      { ...duplicate, partition: 0, offset: 10 },
      { ...duplicate, partition: 0, offset: 9 },
    ];
    expect(sortDecisions(ds).map((d) => `${d.partition}:${d.offset}`)).toEqual(['0:9', '0:10', '1:0']);
  });

  it('orders outputs by (item, location, day, version) in code-point order, not UTF-16 order', () => {
    // U+FF5A (ｚ) sorts before U+1F600 (😀) by code point, after it by UTF-16 code unit.
    const vs = [
      { ...version, item: '😀', version: 1 },
      { ...version, item: 'ｚ', version: 1 },
      { ...version, item: 'widget', location: 'berlin', day: '2026-03-05', version: 10 },
      { ...version, item: 'widget', location: 'berlin', day: '2026-03-05', version: 9 },
      { ...version, item: 'widget', location: 'berlin', day: '2026-03-04', version: 11 },
      { ...version, item: 'widget', location: 'Berlin', day: '2026-03-06', version: 1 },
    ];
    expect(sortOutputVersions(vs).map((v) => `${v.item}|${v.location}|${v.day}|${v.version}`)).toEqual([
      'widget|Berlin|2026-03-06|1',
      'widget|berlin|2026-03-04|11',
      'widget|berlin|2026-03-05|9',
      'widget|berlin|2026-03-05|10',
      'ｚ|berlin|2026-03-05|1',
      '😀|berlin|2026-03-05|1',
    ]);
  });

  it('renders the configuration revisions, revision 1 from offset 0, from keyed by partition in number order', () => {
    // Twelve partitions: "10" and "11" sort before "2" as strings, not as partition numbers.
    const base: NamespaceConfig = {
      source_incarnation: 'kafka:abc',
      stock_keys: [{ threshold: 20, opening: 100, partition: 0, location: 'berlin', item: 'widget' }],
      partitions: 12,
      ledger_origin: '2026-03-01',
      schema_version: 1,
      namespace: 'ns-revisions',
    };
    const added = { item: 'gadget', location: 'paris', partition: 11, opening: 50, threshold: 10 };
    const from = Array.from({ length: 12 }, (_, p) => p * 10);
    const second = nextRevision(baseChain(base), from, { ...base, stock_keys: [...base.stock_keys, added] });
    const [first, next, ...rest] = revisionLines({ base, revisions: [second] });
    expect(rest).toEqual([]);
    const zeros = Object.fromEntries(from.map((_, p) => [String(p), 0]));
    expect(first).toBe(
      `{"type":"revision","revision":1,"from":${JSON.stringify(zeros)},"digest":"${configDigest(base)}","config":${canonicalJson(base)}}`,
    );
    expect(first).toContain('"from":{"0":0,"1":0,"2":0,');
    expect(first).toContain('"config":{"ledger_origin":"2026-03-01","namespace":"ns-revisions",');
    const parsed = JSON.parse(next as string);
    expect(Object.keys(parsed)).toEqual(['type', 'revision', 'from', 'digest', 'config']);
    expect(parsed).toMatchObject({ type: 'revision', revision: 2, digest: second.digest });
    expect(Object.entries(parsed.from)).toEqual(from.map((o, p) => [String(p), o]));
    // The chain can be checked from the lines alone: revision 2's digest covers revision 1's.
    const recomputed = revisionDigest(2, Object.values<number>(parsed.from), parsed.config, configDigest(base));
    expect(recomputed).toBe(parsed.digest);
  });

  it('builds the output topic record key and value as canonical JSON (domain.md §6)', () => {
    expect(outputRecordKey(version)).toBe('{"day":"2026-03-05","item":"widget","location":"berlin"}');
    expect(outputRecordValue(version, 'source-demo-1')).toBe(
      '{"cause":{"offset":6,"partition":0},"closing":20,"day":"2026-03-05","item":"widget","location":"berlin","namespace":"source-demo-1","retracted":false,"schema":1,"status":"OK","version":3}',
    );
    const retracted = {
      ...version,
      version: 5,
      closing: null,
      status: null,
      retracted: true,
      cause: { partition: 0, offset: 9 },
    };
    expect(outputRecordValue(retracted, 'source-demo-1')).toBe(
      '{"cause":{"offset":9,"partition":0},"closing":null,"day":"2026-03-05","item":"widget","location":"berlin","namespace":"source-demo-1","retracted":true,"schema":1,"status":null,"version":5}',
    );
  });
});
