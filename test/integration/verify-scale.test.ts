/**
 * `amendsctl verify` over a ledger (issue 14, item 4), on the real broker and PostgreSQL:
 * one drained namespace of 20,000 records of ledger traffic (AMENDS_VERIFY_SCALE_RECORDS
 * changes the size; issue 31 moved the 100,000-record run's time and memory figures to
 * `npm run bench`, which verifies 200,000 and, with --scale, 2,000,000; 20,000 still
 * crosses the store's keyset pages, 5,000 rows each, and the oracle's read-ahead several
 * times), built once by real workers, relay and view (test/support/
 * ledger-namespace.ts). It must PASS, then each tamper must be FAIL (exit 3) naming exactly
 * what was changed:
 *
 * one output version's closing · one deleted decision · one quarantined raw byte · one
 * dropped view row · one unpublished outbox envelope marked published (its relay cursor moved) · one conflicting
 * record added to the output topic.
 *
 * Each SQL tamper is undone before the next (and the PASS checked again); the topic can only
 * grow, so its conflict comes last. The clean run's `stats` are printed for the record.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/domain/canonical-json.js';
import type { VerifyDocument } from '../../src/verify/verify-document.js';
import { requireBuild, runAmendsctl } from '../support/amendsctl-process.js';
import { TestProducer } from '../support/kafka-source-fixtures.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import { buildLedgerNamespace, type LedgerNamespace, publishTraffic } from '../support/ledger-namespace.js';
import { startAmends, stopAllAmends, TransportProbe, transportEnv } from '../support/transport-process.js';

const records = Number(process.env.AMENDS_VERIFY_SCALE_RECORDS ?? 20_000);
const topics = new Set<string>();
const probe = new TransportProbe();
let ledger: LedgerNamespace;
/** How long one verify may run before the harness calls it hung. */
const verifyRunMaxMs = 150_000;

/** The namespace's id in the per-record tables. */
const nsId = '(SELECT id FROM namespaces WHERE namespace = $1)';

async function verify(): Promise<{ code: number | null; report: VerifyDocument; stderr: string }> {
  // A guard against a hang, not a timing: 19 s alone over 100,000 records; a 45 s guard was
  // hit once at that size in the full suite with a worker deciding beside it.
  const r = await runAmendsctl(
    ['verify', '--manifest', ledger.source.manifestPath, '--json'],
    transportEnv,
    verifyRunMaxMs,
  );
  try {
    return { code: r.code, report: JSON.parse(r.stdout) as VerifyDocument, stderr: r.stderr };
  } catch {
    throw new Error(`verify exited ${r.code} without a JSON document: ${r.stdout}${r.stderr}`);
  }
}

async function one<T>(sql: string, params: unknown[] = []): Promise<T> {
  const { rows } = await probe.pool.query(sql, [ledger.source.namespace, ...params]);
  if (rows.length !== 1) throw new Error(`expected one row of ${sql}, got ${rows.length}`);
  return rows[0] as T;
}

/** FAIL, exit 3, exactly one difference, of `kind` at `key`. */
async function expectFailNaming(kind: string, key: string): Promise<VerifyDocument> {
  const fail = await verify();
  expect(fail.code, fail.stderr).toBe(3);
  expect(fail.report.verdict).toBe('FAIL');
  expect(fail.report.differences.map((d) => `${d.kind} ${d.key}`)).toEqual([`${kind} ${key}`]);
  expect(fail.report.reasons[0]).toBe(`${kind}: 1 difference, first at ${key}`);
  return fail.report;
}

async function expectPass(): Promise<VerifyDocument> {
  const pass = await verify();
  expect(pass.code, JSON.stringify(pass.report.reasons)).toBe(0);
  expect(pass.report.counts.records).toBe(records);
  return pass.report;
}

beforeAll(async () => {
  requireBuild();
  ledger = await buildLedgerNamespace(topics, probe, records, 14);
}, 600_000);
afterEach(() => stopAllAmends());
afterAll(async () => {
  await stopAllAmends();
  await probe.close();
  await deleteTestTopics(topics);
});

describe(`amendsctl verify on ${records.toLocaleString('en')} records`, () => {
  it('PASS, then FAIL naming each tamper of the store, the outbox, the view and the output topic', {
    timeout: 600_000,
  }, async () => {
    const pass = await expectPass();
    expect(pass.counts.quarantine).toBeGreaterThan(0);
    expect(pass.counts.outputs).toBeGreaterThan(records / 2);
    console.log(
      `verify of ${records} records: build ${JSON.stringify(ledger.build_s)} s, stats ${JSON.stringify(pass.stats)}`,
    );

    const v = await one<{ item: string; location: string; day: string; version: number }>(
      `SELECT item, location, day, version FROM output_versions WHERE ns = ${nsId} AND NOT retracted
        ORDER BY item, location, day, version OFFSET $2 LIMIT 1`,
      [Math.floor(pass.counts.outputs / 3)],
    );
    const versionKey = `${v.item}@${v.location} ${v.day} v${v.version}`;
    const where = `ns = ${nsId} AND item = $2 AND location = $3 AND day = $4 AND version = $5`;
    const at = [v.item, v.location, v.day, v.version];
    await probe.pool.query(`UPDATE output_versions SET closing = closing + 1 WHERE ${where}`, [
      ledger.source.namespace,
      ...at,
    ]);
    await expectFailNaming('output', versionKey);
    await probe.pool.query(`UPDATE output_versions SET closing = closing - 1 WHERE ${where}`, [
      ledger.source.namespace,
      ...at,
    ]);

    const d = await one<{ partition: number; record_offset: string; row: unknown }>(
      `SELECT partition, record_offset, row_to_json(d) AS row FROM decisions d
        WHERE ns = ${nsId} AND partition = 1 AND outcome = 'APPLIED' ORDER BY record_offset OFFSET $2 LIMIT 1`,
      [Math.floor(records / 5)],
    );
    await one(`DELETE FROM decisions WHERE ns = ${nsId} AND partition = $2 AND record_offset = $3 RETURNING 1`, [
      d.partition,
      d.record_offset,
    ]);
    await expectFailNaming('decision', `${d.partition}:${d.record_offset}`);
    await probe.pool.query('INSERT INTO decisions SELECT * FROM json_populate_record(NULL::decisions, $1)', [d.row]);

    const q = await one<{ partition: number; record_offset: string }>(
      `SELECT partition, record_offset FROM decisions WHERE ns = ${nsId} AND quarantined AND length(raw_value) > 0
        ORDER BY partition DESC, record_offset DESC LIMIT 1`,
    );
    const flip = `UPDATE decisions SET raw_value = set_byte(raw_value, 0, get_byte(raw_value, 0) # 1)
                   WHERE ns = ${nsId} AND partition = $2 AND record_offset = $3`;
    await probe.pool.query(flip, [ledger.source.namespace, q.partition, q.record_offset]);
    await expectFailNaming('quarantine', `${q.partition}:${q.record_offset}`);
    await probe.pool.query(flip, [ledger.source.namespace, q.partition, q.record_offset]);

    const r = await one<{ item: string; location: string; day: string; row: unknown }>(
      `SELECT item, location, day, row_to_json(r) AS row FROM view_rows r WHERE ns = ${nsId}
        ORDER BY item, location, day OFFSET 10 LIMIT 1`,
    );
    await one(`DELETE FROM view_rows WHERE ns = ${nsId} AND item = $2 AND location = $3 AND day = $4 RETURNING 1`, [
      r.item,
      r.location,
      r.day,
    ]);
    await expectFailNaming('view', `${r.item}@${r.location} ${r.day}`);
    await probe.pool.query('INSERT INTO view_rows SELECT * FROM json_populate_record(NULL::view_rows, $1)', [r.row]);
    await expectPass();
  });

  it('FAIL naming an unpublished envelope marked published, then a conflicting output topic record', {
    timeout: 300_000,
  }, async () => {
    // A tail decided with the relay stopped leaves envelopes unpublished: INCOMPLETE, no difference.
    startAmends('worker', ledger.source.manifestPath, ['--batch-size', '500']);
    const before = await probe.outbox(ledger.source.namespace);
    await publishTraffic(ledger.source, 200, 15, 'tail');
    await probe.waitDecided(ledger.source.namespace, records + 200, 60_000);
    const tail = await verify();
    expect(tail.code, tail.stderr).toBe(4);
    expect(tail.report.differences).toEqual([]);
    expect((await probe.outbox(ledger.source.namespace)).pending).toBeGreaterThan(before.pending);

    // Its partition's relay cursor moved onto it: it alone reads as published (migration 0007).
    const e = await one<{
      id: string;
      partition: number;
      item: string;
      location: string;
      day: string;
      version: number;
    }>(
      `SELECT id, partition, item, location, day, version FROM outbox WHERE ns = ${nsId} AND NOT published
        ORDER BY id LIMIT 1`,
    );
    const moveCursor = (to: string) =>
      probe.pool.query(
        `UPDATE relay_partitions r SET published_through = $3
          WHERE namespace = $1 AND partition = $2 RETURNING (SELECT published_through FROM relay_partitions
                 WHERE namespace = r.namespace AND partition = r.partition) AS was`,
        [ledger.source.namespace, e.partition, to],
      );
    const was = String((await moveCursor(e.id)).rows[0]?.was);
    const marked = await expectFailNaming('topic', `${e.item}@${e.location} ${e.day} v${e.version}`);
    expect(marked.differences[0]?.got).toBeNull();
    await moveCursor(was);

    const published = await one<{ partition: number; record_key: Buffer; record_value: Buffer; label: string }>(
      `SELECT partition, record_key, record_value, item || '@' || location || ' ' || day || ' v' || version AS label
         FROM outbox WHERE ns = ${nsId} AND published AND version > 1 ORDER BY id OFFSET 7 LIMIT 1`,
    );
    const value = JSON.parse(published.record_value.toString('utf8')) as { closing: number | null };
    value.closing = (value.closing ?? 0) + 1;
    const producer = await TestProducer.open();
    try {
      await producer.send(ledger.source.outputTopic, [
        { partition: published.partition, key: published.record_key, value: Buffer.from(canonicalJson(value)) },
      ]);
    } finally {
      await producer.close();
    }
    const conflict = await expectFailNaming('topic', published.label);
    expect(conflict.differences[0]?.got).toMatchObject({ partition: published.partition });
  });
});
