/**
 * `amendsctl explain` and `balances` on the fixtures (issue 36, Done when): the built binary
 * against the real PostgreSQL, over a store the worker's store seam wrote (fixture-store.ts):
 * domain.md §7's worked example on widget@berlin (partition 0, three stages, three commits) and
 * gadget@paris on partition 1. The expected values are domain.md §7's and, for gadget@paris,
 * what `amendsctl simulate` prints for the same records.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balancesCommand } from '../../src/cli/commands/balances.js';
import { explainCommand } from '../../src/cli/commands/explain.js';
import { Database } from '../../src/io/store/postgres.js';
import { isOneLineDiagnostic, requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { testDatabaseUrl } from '../support/endpoints.js';
import { type FixtureStore, writeFixtureStore } from '../support/fixture-store.js';
import { runInProcess } from '../support/in-process-command.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';

const admin = new pg.Client({ connectionString: testDatabaseUrl });
const schemas = new TestSchemas(admin, 'amends_test_explain');
let store: FixtureStore;
let env: Record<string, string>;

beforeAll(async () => {
  requireBuild();
  await admin.connect();
  const url = urlForSchema(await schemas.fresh());
  const db = await Database.open(url, 'amends-test explain');
  try {
    store = await writeFixtureStore(db);
  } finally {
    await db.close();
  }
  env = { AMENDS_DATABASE_URL: url };
});

afterAll(async () => {
  await schemas.dropAll();
  await admin.end();
});

const widgetDay = ['--item', 'widget', '--location', 'berlin', '--day', '2026-03-05'];

/** The built binary, as a user runs it. */
async function amendsctl(...args: string[]) {
  return runAmendsctl([args[0] as string, '--manifest', store.manifestPath, ...args.slice(1)], env);
}

/** The same commands in this process (in-process-command.ts): the many smaller questions. */
async function inProcess(...args: string[]) {
  const argv = [args[0] as string, '--manifest', store.manifestPath, ...args.slice(1)];
  return runInProcess([explainCommand as never, balancesCommand as never], argv, env);
}

async function explainJson(...args: string[]) {
  const result = await inProcess('explain', ...widgetDay, '--json', ...args);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

const cause = (offset: number, txn: string, rev: number) => ({ partition: 0, offset, outcome: 'APPLIED', txn, rev });
const contribution = (txn: string, rev: number, day: string, qty: number, offset: number) => ({
  txn,
  rev,
  day: `2026-03-0${day}`,
  qty,
  source: { partition: 0, offset },
});
/** `…T10:00:00.000000Z` → `…T09:59:59.999999Z`. */
function microsecondBefore(at: string): string {
  const [seconds, fraction] = at.slice(0, -1).split('.') as [string, string];
  const micros = BigInt(Date.parse(`${seconds}Z`)) * 1000n + BigInt(fraction) - 1n;
  const whole = new Date(Number(micros / 1_000_000n) * 1000).toISOString().slice(0, 19);
  return `${whole}.${String(micros % 1_000_000n).padStart(6, '0')}Z`;
}

const withoutTimes = <T extends { decided_at?: string; committed_at?: string }>(rows: T[]) =>
  rows.map(({ decided_at: _d, committed_at: _c, ...rest }) => rest);

describe('explain on the fixtures', () => {
  it('shows widget@berlin 2026-03-05 retracted at version 5 with its five-version history', async () => {
    const d = await explainJson();
    expect(d.balance).toMatchObject({
      version: 5,
      closing: null,
      status: null,
      retracted: true,
      cause: cause(9, 'T5', 2),
    });
    expect(d.contributions).toBeNull();
    expect(d.as_of).toEqual({ kind: 'now', time: null, through: [9, 6] });
    expect(withoutTimes(d.history)).toEqual([
      { version: 1, closing: 15, status: 'LOW', retracted: false, cause: cause(3, 'T4', 1) },
      { version: 2, closing: 10, status: 'LOW', retracted: false, cause: cause(4, 'T5', 1) },
      { version: 3, closing: 20, status: 'OK', retracted: false, cause: cause(6, 'T2', 2) },
      { version: 4, closing: 60, status: 'OK', retracted: false, cause: cause(8, 'T4', 2) },
      { version: 5, closing: null, status: null, retracted: true, cause: cause(9, 'T5', 2) },
    ]);
    expect(d.later_versions).toBe(0);
    const text = await amendsctl('explain', ...widgetDay);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('retracted at version 5 of 5: no closing');
  });

  it('as of 0:7: closing 20 (version 3) = opening 100 + T1, T2 at revision 2, T3, T4 and T5', async () => {
    const d = await explainJson('--as-of', '0:7');
    expect(d.opening).toBe(100);
    expect(d.balance).toMatchObject({ version: 3, closing: 20, status: 'OK', retracted: false });
    expect(withoutTimes(d.contributions)).toEqual([
      contribution('T1', 1, '2', -30, 0),
      contribution('T2', 2, '3', -15, 6),
      contribution('T3', 1, '4', 10, 2),
      contribution('T4', 1, '5', -40, 3),
      contribution('T5', 1, '5', -5, 4),
    ]);
    expect(d.history.map((v: { version: number }) => v.version)).toEqual([1, 2, 3]);
    expect(d.later_versions).toBe(2);
    // Partition 1 is not named: as decided now.
    expect(d.as_of).toEqual({ kind: 'position', time: null, through: [7, 6] });

    const text = (await amendsctl('explain', ...widgetDay, '--as-of', '0:7')).stdout;
    expect(text).toContain('closing 20 OK: version 3 of 5, caused by T2 rev 2 at 0:6');
    expect(text).toMatch(/\n2026-03-03 +T2 +2 +-15 +55 +0:6 /);
    expect(text).toContain('closing 20 = opening 100 + 5 transactions');
  });

  it('as of 0:4: version 2, closing 10 LOW, with T2 at revision 1', async () => {
    const d = await explainJson('--as-of', '0:4');
    expect(d.balance).toMatchObject({ version: 2, closing: 10, status: 'LOW', cause: cause(4, 'T5', 1) });
    expect(withoutTimes(d.contributions)).toContainEqual(contribution('T2', 1, '3', -25, 1));
    expect(d.later_versions).toBe(3);
  });

  it('as of a time: the decisions committed at or before it', async () => {
    const [first, second, third] = store.stages;
    const correction = await explainJson('--as-of-time', second?.decidedAt as string);
    expect(correction.as_of).toEqual({ kind: 'time', time: second?.decidedAt, through: [7, 6] });
    expect(correction.balance).toMatchObject({ version: 3, closing: 20 });
    // One microsecond before a stage's commit time is before all of that stage.
    expect((await explainJson('--as-of-time', microsecondBefore(third?.decidedAt as string))).as_of.through[0]).toBe(7);
    const beforeCorrection = await explainJson('--as-of-time', microsecondBefore(second?.decidedAt as string));
    expect(beforeCorrection.as_of.through[0]).toBe(first?.last);
    const early = await inProcess('explain', ...widgetDay, '--as-of-time', '2000-01-01T00:00:00Z');
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/had no balance yet as of 2000-01-01T00:00:00Z \(0:- 1:-\)/);
  });

  it("carries each revision's raw key and envelope on request", async () => {
    const d = await explainJson('--as-of', '0:7', '--envelopes');
    const t2 = d.contributions.find((c: { txn: string }) => c.txn === 'T2');
    expect(JSON.parse(Buffer.from(t2.value_b64, 'base64').toString('utf8'))).toMatchObject({
      txn: 'T2',
      rev: 2,
      qty: -15,
    });
    expect(JSON.parse(Buffer.from(t2.key_b64, 'base64').toString('utf8'))).toEqual({
      item: 'widget',
      location: 'berlin',
    });
  });

  it('refuses in one line, exit 1: an unknown key, a day never touched, a position beyond the frontier, no balance yet', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['--item', 'widget', '--location', 'paris', '--day', '2026-03-05'],
        /widget@paris is not a stock key of namespace /,
      ],
      [
        ['--item', 'widget', '--location', 'berlin', '--day', '2026-03-09'],
        /2026-03-09 never had a balance: no transaction/,
      ],
      [
        [...widgetDay, '--as-of', '0:10'],
        /position 0:10 is beyond the frontier of partition 0 \(offsets 0…9 are decided\)/,
      ],
      [[...widgetDay, '--as-of', '0:2'], /had no balance yet as of 0:2 1:6: its version 1 was caused at 0:3/],
    ];
    for (const [args, message] of cases) {
      const result = await inProcess('explain', ...args);
      expect(result.code, result.stderr).toBe(1);
      expect(isOneLineDiagnostic(result.stderr), result.stderr).toBe(true);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
    const both = await inProcess('explain', ...widgetDay, '--as-of', '0:7', '--as-of-time', '2026-03-05T10:00:00Z');
    expect(both.code).toBe(2);
    const zoneless = await inProcess('explain', ...widgetDay, '--as-of-time', '2026-03-05T10:00:00');
    expect([zoneless.code, zoneless.stderr]).toEqual([2, expect.stringMatching(/is not a time with a zone/)]);
  });
});

describe('balances on the fixtures', () => {
  it('prints every active day now, as a table', async () => {
    const result = await amendsctl('balances');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      'item    location  day         closing  status    version  cause_partition  cause_offset',
      'gadget  paris     2026-03-02  30       OK        1        1                0',
      'gadget  paris     2026-03-03  -5       NEGATIVE  4        1                6',
      'gadget  paris     2026-03-04  -15      NEGATIVE  2        1                6',
      'widget  berlin    2026-03-02  70       OK        1        0                0',
      'widget  berlin    2026-03-03  55       OK        2        0                6',
      'widget  berlin    2026-03-04  65       OK        2        0                6',
      '',
    ]);
  });

  it('as of 0:4 as CSV, partition 1 as now', async () => {
    const result = await inProcess('balances', '--as-of', '0:4', '--format', 'csv');
    expect(result.stdout).toBe(
      [
        'item,location,day,closing,status,version,cause_partition,cause_offset',
        'gadget,paris,2026-03-02,30,OK,1,1,0',
        'gadget,paris,2026-03-03,-5,NEGATIVE,4,1,6',
        'gadget,paris,2026-03-04,-15,NEGATIVE,2,1,6',
        'widget,berlin,2026-03-02,70,OK,1,0,0',
        'widget,berlin,2026-03-03,45,OK,1,0,1',
        'widget,berlin,2026-03-04,55,OK,1,0,2',
        'widget,berlin,2026-03-05,10,LOW,2,0,4',
        '',
      ].join('\r\n'),
    );
  });

  it('narrowed to a key and days, as JSON Lines', async () => {
    const result = await inProcess(
      'balances',
      ...['--item', 'widget', '--location', 'berlin', '--from', '2026-03-03', '--to', '2026-03-05'],
      ...['--as-of', '0:7,1:0', '--format', 'jsonl'],
    );
    expect(
      result.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      {
        item: 'widget',
        location: 'berlin',
        day: '2026-03-03',
        closing: 55,
        status: 'OK',
        version: 2,
        cause: { partition: 0, offset: 6 },
      },
      {
        item: 'widget',
        location: 'berlin',
        day: '2026-03-04',
        closing: 65,
        status: 'OK',
        version: 2,
        cause: { partition: 0, offset: 6 },
      },
      {
        item: 'widget',
        location: 'berlin',
        day: '2026-03-05',
        closing: 20,
        status: 'OK',
        version: 3,
        cause: { partition: 0, offset: 6 },
      },
    ]);
  });
});
