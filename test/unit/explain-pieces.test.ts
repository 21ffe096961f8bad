/**
 * The pure pieces of `explain` and `balances` (issue 36): source positions and times for
 * --as-of / --as-of-time, the explanation's document with its sum check, the read API's schema
 * name, and the balance formats.
 */
import { describe, expect, it } from 'vitest';
import { csvLine, jsonLine } from '../../src/cli/balance-formats.js';
import { explanationDocument, renderExplanation } from '../../src/cli/explain-report.js';
import {
  formatThrough,
  isZonedTime,
  parsePositions,
  positionBeyond,
  throughOf,
} from '../../src/domain/source-position.js';
import type { Contribution, DayVersion } from '../../src/io/store/read-api.js';
import { apiSchemaFor, apiSchemaOf } from '../../src/io/store/read-api-schema.js';
import { InvariantViolation } from '../../src/kernel/invariant.js';

describe('source positions', () => {
  it('parse P:O lists, and say what is wrong in one line', () => {
    expect(parsePositions('0:7', 2)).toEqual({ ok: true, positions: new Map([[0, 7]]) });
    expect(parsePositions('1:12, 0:0', 2)).toEqual({
      ok: true,
      positions: new Map([
        [1, 12],
        [0, 0],
      ]),
    });
    expect(parsePositions('2:1', 2)).toEqual({ ok: false, reason: 'partition 2 is not in [0, 2) of this namespace' });
    expect(parsePositions('0:1,0:2', 2)).toEqual({ ok: false, reason: 'partition 0 is named twice' });
    for (const bad of ['', '0', '0:', ':7', '0:-1', '0:07', 'a:1', '0:1:2', '0:99999999999999999999']) {
      expect(parsePositions(bad, 2).ok, bad).toBe(false);
    }
  });

  it('are beyond a frontier at or past it, and bound unnamed partitions at what is decided', () => {
    expect(positionBeyond(new Map([[0, 9]]), [10, 0])).toBeUndefined();
    expect(positionBeyond(new Map([[0, 10]]), [10, 0])).toEqual({ partition: 0, offset: 10, frontier: 10 });
    expect(positionBeyond(new Map([[1, 0]]), [10, 0])).toEqual({ partition: 1, offset: 0, frontier: 0 });
    expect(throughOf(new Map([[0, 4]]), [10, 7, 0])).toEqual([4, 6, -1]);
    expect(formatThrough([4, 6, -1])).toBe('0:4 1:6 2:-');
  });

  it('take times only with a zone', () => {
    for (const ok of ['2026-03-05T10:00:00Z', '2026-03-05 10:00+01:00', '2026-03-05T10:00:00.123456-0530']) {
      expect(isZonedTime(ok), ok).toBe(true);
    }
    for (const bad of ['2026-03-05T10:00:00', '2026-03-05', '2026-02-30T10:00Z', '2026-03-05T24:00Z', 'now']) {
      expect(isZonedTime(bad), bad).toBe(false);
    }
  });
});

const version = (v: number, closing: number | null, offset: number, txn: string, rev: number): DayVersion => ({
  version: v,
  closing,
  status: closing === null ? null : closing < 20 ? 'LOW' : 'OK',
  retracted: closing === null,
  cause: { partition: 0, offset, outcome: 'APPLIED', txn, rev },
  committed_at: `2026-03-05T10:00:0${v}.000000Z`,
});
const contribution = (txn: string, rev: number, day: string, qty: number, offset: number): Contribution => ({
  txn,
  rev,
  day,
  qty,
  source: { partition: 0, offset },
  decided_at: '2026-03-05T10:00:00.000000Z',
  key: Buffer.from('{"item":"widget","location":"berlin"}'),
  value: Buffer.from(`{"txn":"${txn}"}`),
});

/** domain.md §7 as of 0:7. */
const asOf07 = {
  namespace: 'source-demo-1',
  item: 'widget',
  location: 'berlin',
  day: '2026-03-05',
  opening: 100,
  asOf: { kind: 'position' as const, time: null, through: [7, -1] },
  versions: [version(1, 15, 3, 'T4', 1), version(2, 10, 4, 'T5', 1), version(3, 20, 6, 'T2', 2)],
  later: 2,
  contributions: [
    contribution('T1', 1, '2026-03-02', -30, 0),
    contribution('T2', 2, '2026-03-03', -15, 6),
    contribution('T3', 1, '2026-03-04', 10, 2),
    contribution('T4', 1, '2026-03-05', -40, 3),
    contribution('T5', 1, '2026-03-05', -5, 4),
  ],
  envelopes: false,
};

describe('the explanation', () => {
  it('prints the decomposition with its running total, then the history up to the bound', () => {
    expect(renderExplanation(explanationDocument(asOf07))).toBe(
      [
        'widget@berlin 2026-03-05 in namespace source-demo-1, as of 0:7 1:-',
        'closing 20 OK: version 3 of 5, caused by T2 rev 2 at 0:6, committed 2026-03-05T10:00:03.000000Z',
        '',
        'day         txn      rev  qty  running  source  decided',
        '            opening            100',
        '2026-03-02  T1       1    -30  70       0:0     2026-03-05T10:00:00.000000Z',
        '2026-03-03  T2       2    -15  55       0:6     2026-03-05T10:00:00.000000Z',
        '2026-03-04  T3       1    +10  65       0:2     2026-03-05T10:00:00.000000Z',
        '2026-03-05  T4       1    -40  25       0:3     2026-03-05T10:00:00.000000Z',
        '2026-03-05  T5       1    -5   20       0:4     2026-03-05T10:00:00.000000Z',
        'closing 20 = opening 100 + 5 transactions',
        '',
        'history of 2026-03-05',
        'version  closing  status  cause  outcome  txn  rev  committed',
        '1        15       LOW     0:3    APPLIED  T4   1    2026-03-05T10:00:01.000000Z',
        '2        10       LOW     0:4    APPLIED  T5   1    2026-03-05T10:00:02.000000Z',
        '3        20       OK      0:6    APPLIED  T2   2    2026-03-05T10:00:03.000000Z',
        '(2 later versions not shown: decided after the bound)',
        '',
      ].join('\n'),
    );
  });

  it('is a bug report, not an explanation, when the transactions do not add up to the closing', () => {
    const missing = { ...asOf07, contributions: asOf07.contributions.slice(1) };
    expect(() => explanationDocument(missing)).toThrow(InvariantViolation);
    expect(() => explanationDocument(missing)).toThrow(/opening 100 \+ the contributions = 50, but version 3 says 20/);
  });

  it('carries the raw bytes in base64 on request', () => {
    const d = explanationDocument({ ...asOf07, envelopes: true });
    expect(d.contributions?.[0]).toMatchObject({
      key_b64: Buffer.from('{"item":"widget","location":"berlin"}').toString('base64'),
      value_b64: Buffer.from('{"txn":"T1"}').toString('base64'),
    });
    expect(renderExplanation(d)).toMatch(/\n2026-03-02 +T1 .* \{"txn":"T1"\}\n/);
  });
});

describe("the read API's schema", () => {
  it("is amends' schema with _api appended, refused where PostgreSQL would cut it short", () => {
    expect(apiSchemaOf('amends')).toBe('amends_api');
    expect(apiSchemaFor('postgres://u@h/db?options=-c%20search_path%3Dledger')).toBe('ledger_api');
    expect(apiSchemaFor('postgres://u@h/db')).toBe('amends_api');
    expect(apiSchemaOf('a'.repeat(59))).toHaveLength(63);
    expect(() => apiSchemaOf('a'.repeat(60))).toThrow(/too long a name for its read API's schema .* at most 59/);
  });
});

describe('balance formats', () => {
  const row = {
    item: 'a,"b"',
    location: 'x\ny',
    day: '2026-03-05',
    version: 2,
    closing: -5,
    status: 'NEGATIVE',
    cause: { partition: 1, offset: 9 },
  };
  it('quote CSV fields as RFC 4180 says, and end lines with CRLF', () => {
    expect(csvLine([row.item, row.location, 'plain'])).toBe('"a,""b""","x\ny",plain\r\n');
  });
  it('write JSON Lines in the documented key order', () => {
    expect(jsonLine(row)).toBe(
      '{"item":"a,\\"b\\"","location":"x\\ny","day":"2026-03-05","closing":-5,"status":"NEGATIVE","version":2,"cause":{"partition":1,"offset":9}}\n',
    );
  });
});
