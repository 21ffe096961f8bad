/**
 * PostgresState (src/io/store/postgres-state.ts) against the real PostgreSQL: the store seam of
 * worker.md §5–§7. Every test registers a fresh amends-test-* namespace and touches only
 * its rows (namespaces stay, as in the other integration suites).
 *
 * What the store commits is compared line for line with what `amendsctl simulate` prints
 * for the same records (the domain engine over the whole input, export-lines.ts), read back
 * through src/verify/export-queries.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Manifest, type NamespaceConfig, parseNamespaceConfig } from '../../src/domain/config.js';
import { decideBatch, screenRecord } from '../../src/domain/decide.js';
import {
  decisionLine,
  outputLine,
  outputRecordKey,
  outputRecordValue,
  quarantineLine,
  sortDecisions,
  sortOutputVersions,
} from '../../src/domain/export-lines.js';
import { batchNeeds } from '../../src/domain/key-window.js';
import type { OutputVersion } from '../../src/domain/output-version.js';
import { parseSimulationInput } from '../../src/domain/simulation-input.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { namespaceId, registerNamespace } from '../../src/io/store/namespace-registry.js';
import { outboxChannel } from '../../src/io/store/outbox-channel.js';
import { Database } from '../../src/io/store/postgres.js';
import { PostgresState } from '../../src/io/store/postgres-state.js';
import { commitBatchSql } from '../../src/io/store/sql/commit-batch.js';
import { loadWindowSql, loadWindowValues } from '../../src/io/store/sql/load-window.js';
import { storeStatementNames } from '../../src/io/store/sql/statement-names.js';
import { warmUpRounds } from '../../src/io/store/warm-up-batch.js';
import type { WindowCacheLimits } from '../../src/io/store/window-cache.js';
import { StoreFailure } from '../../src/machines/ports.js';
import { bindStatementName, PgFaultProxy } from '../../src/showcase/pg-fault-proxy.js';
import {
  collectLines,
  exportDecisionLines,
  exportOutputLines,
  exportQuarantineLines,
  readOutputVersions,
} from '../../src/verify/export-queries.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';
import { TestSchemas, urlForSchema } from '../support/test-schemas.js';
import { workedExampleInput, workedExampleLines } from '../unit/worked-example-kit.js';

let db: Database;
const admin = new pg.Client({ connectionString: testDatabaseUrl });
const openStores: PostgresState[] = [];
const never = new AbortController().signal;

beforeAll(async () => {
  db = await Database.open(testDatabaseUrl, 'amends-test postgres-state');
  await admin.connect();
});
afterEach(async () => {
  await Promise.all(openStores.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await admin.end();
  await db.close();
});

// ------------------------------------------------------------------------------ fixtures

function configFor(namespace: string): NamespaceConfig {
  return parseNamespaceConfig({
    namespace,
    schema_version: 1,
    ledger_origin: '2026-03-01',
    partitions: 2,
    stock_keys: [
      { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
      { item: 'gadget', location: 'paris', partition: 1, opening: 0, threshold: 5 },
    ],
    source_incarnation: `kafka:${'ab'.repeat(16)}`,
  });
}

async function freshNamespace(): Promise<NamespaceConfig> {
  const config = configFor(testName());
  const manifest: Manifest = { source_topic: `${config.namespace}-topic`, config };
  await registerNamespace(db.pool, manifest);
  return config;
}

let storeCount = 0;
function newStore(
  config: NamespaceConfig,
  database: Pick<Database, 'pool' | 'url'> = db,
  cacheLimits?: WindowCacheLimits,
): PostgresState {
  storeCount += 1;
  const store = new PostgresState(database, config, {
    applicationName: `amends-test store ${config.namespace} ${storeCount}`,
    workerId: `test-worker-${storeCount}`,
    cacheLimits,
  });
  openStores.push(store);
  return store;
}

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const keyOf = (item: string, location: string) => utf8(JSON.stringify({ item, location }));

function post(txn: string, rev: number, day: string, qty: number, item = 'widget', location = 'berlin') {
  return utf8(JSON.stringify({ schema: 1, txn, rev, op: 'post', item, location, day, qty }));
}
function cancel(txn: string, rev: number, item = 'widget', location = 'berlin') {
  return utf8(JSON.stringify({ schema: 1, txn, rev, op: 'cancel', item, location }));
}

/** The three fixtures: partition 0, offsets 0–9 (domain.md §7). */
function fixtureRecords(config: NamespaceConfig): SourceRecord[] {
  return parseSimulationInput(workedExampleInput, config).map(({ partition, offset, key, value }) => ({
    partition,
    offset,
    key,
    value,
  }));
}

/** The fixtures plus garbage, every outcome, raw-byte edge cases and offset gaps, on both partitions. */
function mixedRecords(config: NamespaceConfig): SourceRecord[] {
  const widget = keyOf('widget', 'berlin');
  const gadget = keyOf('gadget', 'paris');
  const r = (partition: number, offset: number, key: Uint8Array | null, value: Uint8Array | null) => ({
    partition,
    offset,
    key,
    value,
  });
  return [
    ...fixtureRecords(config),
    r(0, 12, null, post('T9', 1, '2026-03-02', 1)), // KEY_MISMATCH: no key
    r(0, 13, new Uint8Array(0), post('T9', 1, '2026-03-02', 1)), // KEY_MISMATCH: empty key
    r(0, 20, widget, new Uint8Array([0xff, 0xfe, 0x7b, 0x00])), // MALFORMED: invalid UTF-8
    r(0, 21, widget, null), // MALFORMED: no value
    r(0, 22, widget, post('T7', 1, '2026-02-01', 5)), // BEFORE_ORIGIN
    r(0, 23, keyOf('nothing', 'x'), post('T7', 1, '2026-03-02', 5, 'nothing', 'x')), // UNKNOWN_KEY
    r(0, 24, gadget, post('G9', 1, '2026-03-02', 5, 'gadget', 'paris')), // ROUTING
    r(0, 25, widget, post('T1', 1, '2026-03-02', -31)), // CONFLICT
    r(0, 26, widget, post('T6', 3, '2026-03-01', 7)), // APPLIED: every later day moves
    r(0, 30, widget, utf8('{"schema":1}')), // SCHEMA
    r(0, 31, widget, post('T6', 4, '2026-03-09', -200)), // APPLIED: NEGATIVE
    r(1, 0, gadget, post('G1', 1, '2026-03-02', 3, 'gadget', 'paris')),
    r(1, 1, gadget, post('G2', 1, '2026-03-02', 4, 'gadget', 'paris')),
    r(1, 5, gadget, cancel('G1', 2, 'gadget', 'paris')),
    r(1, 6, gadget, post('G1', 1, '2026-03-02', 3, 'gadget', 'paris')), // STALE
    r(1, 7, gadget, post('G2', 1, '2026-03-02', 4, 'gadget', 'paris')), // DUPLICATE
    r(1, 9, widget, post('T1', 5, '2026-03-02', 1)), // ROUTING
    r(1, 10, gadget, cancel('G2', 2, 'gadget', 'paris')), // APPLIED: retraction
  ];
}

/** What `amendsctl simulate` prints for these records, plus the quarantine export lines. */
function simulated(config: NamespaceConfig, records: readonly SourceRecord[]) {
  const results = decideBatch(records, config, new Map());
  const decisions = sortDecisions(results.map((r) => r.decision));
  const raw = new Map(records.map((r) => [`${r.partition}:${r.offset}`, r]));
  return {
    decisions: decisions.map(decisionLine),
    outputs: sortOutputVersions(results.flatMap((r) => r.newVersions)).map(outputLine),
    quarantine: decisions
      .filter((d) => d.quarantined)
      .map((d) => quarantineLine(d, raw.get(`${d.partition}:${d.offset}`) as SourceRecord)),
  };
}

async function exported(namespace: string, pageRows?: number) {
  return {
    decisions: await collectLines(exportDecisionLines(db.pool, namespace, pageRows)),
    outputs: await collectLines(exportOutputLines(db.pool, namespace, pageRows)),
    quarantine: await collectLines(exportQuarantineLines(db.pool, namespace, pageRows)),
  };
}

/** Per partition, in outbox order: [partition, key, value] of each envelope, as text. */
async function outboxRecords(namespace: string) {
  const rows = await admin.query<{ partition: number; record_key: Buffer; record_value: Buffer }>(
    'SELECT partition, record_key, record_value FROM outbox WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1) ORDER BY partition, id',
    [namespace],
  );
  return rows.rows.map((r) => [r.partition, r.record_key.toString('utf8'), r.record_value.toString('utf8')]);
}

/** The engine's versions in decision order per partition, as output topic records (domain.md §6). */
function expectedOutbox(config: NamespaceConfig, records: readonly SourceRecord[]) {
  const byPartition = [0, 1].flatMap((p) => decideBatch(ofPartition(records, p), config, new Map()));
  return byPartition.flatMap((r) =>
    r.newVersions.map((v) => [v.cause.partition, outputRecordKey(v), outputRecordValue(v, config.namespace)]),
  );
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const ofPartition = (records: readonly SourceRecord[], partition: number) =>
  records.filter((r) => r.partition === partition);

/** Processes batches in order, each expected to be acknowledged; returns the frontier. */
async function processAll(
  store: PostgresState,
  partition: number,
  epoch: number,
  frontier: number,
  batches: readonly SourceRecord[][],
): Promise<number> {
  let expected = frontier;
  for (const records of batches) {
    const outcome = await store.process({ partition, records, epoch, expectedFrontier: expected }, never);
    const last = records[records.length - 1] as SourceRecord;
    expect(outcome).toEqual({ kind: 'acknowledged', frontier: last.offset + 1 });
    expected = last.offset + 1;
  }
  return expected;
}

/** Everything the namespace holds, to prove a call wrote nothing. */
async function durableState(namespace: string) {
  const partitions = await admin.query('SELECT * FROM partitions WHERE namespace = $1 ORDER BY partition', [namespace]);
  const counts = await admin.query(
    `WITH n AS (SELECT id FROM namespaces WHERE namespace = $1)
     SELECT (SELECT count(*) FROM decisions, n WHERE ns = n.id) AS decisions,
            (SELECT count(*) FROM authority, n WHERE ns = n.id) AS authority,
            (SELECT count(*) FROM output_versions, n WHERE ns = n.id) AS output_versions,
            (SELECT count(*) FROM output_days, n WHERE ns = n.id) AS output_days,
            (SELECT count(*) FROM outbox, n WHERE ns = n.id) AS outbox`,
    [namespace],
  );
  return { partitions: partitions.rows, counts: counts.rows[0] };
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(value)}`);
    await sleep(20);
  }
}

// ------------------------------------------------------------------------------ tests

describe('PostgresState: claim and observe', () => {
  it('observe installs nothing; claim increments the epoch under the row and returns the frontier', async () => {
    const config = await freshNamespace();
    const store = newStore(config);
    expect(await store.observe(0, never)).toEqual({ epoch: 0, frontier: 0 });
    expect((await durableState(config.namespace)).partitions).toEqual([]);

    expect(await store.claim(0, never)).toEqual({ epoch: 1, frontier: 0 });
    expect(await store.claim(0, never)).toEqual({ epoch: 2, frontier: 0 });
    expect(await store.observe(0, never)).toEqual({ epoch: 2, frontier: 0 });
    expect(await store.observe(1, never)).toEqual({ epoch: 0, frontier: 0 });

    await processAll(store, 0, 2, 0, [fixtureRecords(config).slice(0, 3)]);
    expect(await newStore(config).claim(0, never)).toEqual({ epoch: 3, frontier: 3 });
  });

  it('warm decides a synthetic batch and commits nothing: no row of the namespace, then real batches as simulate', async () => {
    const config = await freshNamespace();
    const store = newStore(config);
    expect(await store.warm(never)).toEqual({ rounds: warmUpRounds, sent: true });
    const nsId = await namespaceId(db.pool, config.namespace);
    for (const table of ['decisions', 'authority', 'output_versions', 'output_days', 'outbox']) {
      const rows = await admin.query(`SELECT count(*)::int AS n FROM ${table} WHERE ns = $1`, [nsId]);
      expect(rows.rows[0].n, table).toBe(0);
    }
    expect((await durableState(config.namespace)).partitions).toEqual([]);
    const { epoch } = await store.claim(0, never);
    await processAll(store, 0, epoch, 0, [fixtureRecords(config)]);
    expect(await exported(config.namespace)).toEqual(simulated(config, fixtureRecords(config)));
  });

  it('a claim waits for the warm-up under way; a warm-up that a claim overtook stops', async () => {
    const config = await freshNamespace();
    const patient = new PostgresState(db, config, { workerId: 'patient', warmUpWaitMs: 60_000 });
    openStores.push(patient);
    const order: string[] = [];
    const warming = patient.warm(never).then((w) => order.push('warmed') && w);
    await patient.claim(0, never).then(() => order.push('claimed'));
    expect(order).toEqual(['warmed', 'claimed']);
    expect(await warming).toEqual({ rounds: warmUpRounds, sent: true });

    const hasty = new PostgresState(db, config, { workerId: 'hasty', warmUpWaitMs: 0 });
    openStores.push(hasty);
    const overtaken = hasty.warm(never);
    expect(await hasty.claim(0, never)).toEqual({ epoch: 2, frontier: 0 });
    const stopped = await overtaken;
    expect(stopped.sent).toBe(false);
    expect(stopped.rounds).toBeLessThan(warmUpRounds);
  });

  it('refuses a partition outside the configuration', async () => {
    const store = newStore(await freshNamespace());
    await expect(store.claim(2, never)).rejects.toThrow(/partition 2 is not in \[0, 2\)/);
  });
});

describe('PostgresState: process', () => {
  it('acknowledges, moves the frontier by broker offsets (gaps allowed) and keeps the last work', async () => {
    const config = await freshNamespace();
    const store = newStore(config);
    const { epoch } = await store.claim(0, never);
    const [r0, r1] = fixtureRecords(config);
    const gapped = { ...(r1 as SourceRecord), offset: 4 };
    const garbage = { partition: 0, offset: 6, key: null, value: null };
    expect(
      await store.process({ partition: 0, records: [r0 as SourceRecord, gapped], epoch, expectedFrontier: 0 }, never),
    ).toEqual({ kind: 'acknowledged', frontier: 5 });
    expect(await store.process({ partition: 0, records: [garbage], epoch, expectedFrontier: 5 }, never)).toEqual({
      kind: 'acknowledged',
      frontier: 7,
    });
    expect(await store.observe(0, never)).toEqual({ epoch, frontier: 7 });

    const [row] = (await durableState(config.namespace)).partitions;
    expect(row).toMatchObject({
      epoch: '1',
      frontier: '7',
      owner: expect.stringMatching(/^test-worker-/),
      last_first_offset: '6',
      last_last_offset: '6',
      last_records: 1,
      last_counts: { MALFORMED: 1 },
      last_epoch: '1',
    });
    expect(Number(row.last_work_elapsed_ns)).toBeGreaterThan(0);
    expect(row.last_committed_at).toBeInstanceOf(Date);
  });

  it.each([1, 3, 500])('the three fixtures at batch size %i commit exactly the simulate lines', async (size) => {
    const config = await freshNamespace();
    const store = newStore(config);
    const { epoch } = await store.claim(0, never);
    const records = fixtureRecords(config);
    expect(await processAll(store, 0, epoch, 0, chunks(records, size))).toBe(10);

    const want = simulated(config, records);
    const got = await exported(config.namespace);
    expect([...got.decisions, ...got.outputs]).toEqual(workedExampleLines);
    expect(got).toEqual(want);
  });

  describe.each([1, 3, 500])('mixed input on two partitions at batch size %i', (size) => {
    it.each(['recreated', 'claimed'] as const)(
      'equals simulate (decisions, outputs, quarantine, outbox) when the second half runs on a %s store',
      async (handover) => {
        const config = await freshNamespace();
        const records = mixedRecords(config);
        const first = newStore(config);
        const epochs = [(await first.claim(0, never)).epoch, (await first.claim(1, never)).epoch];
        const frontiers = [0, 0];
        const second = newStore(config);
        for (const [index, store] of [first, second].entries()) {
          for (const partition of [0, 1]) {
            // Split by records, so that even batch size 500 has a first and a second half.
            const own = ofPartition(records, partition);
            const half = Math.ceil(own.length / 2);
            const part = chunks(index === 0 ? own.slice(0, half) : own.slice(half), size);
            if (index === 1 && handover === 'claimed') {
              // A new owner: the old one is fenced on its next batch and writes nothing.
              const claimed = await second.claim(partition, never);
              expect(claimed).toEqual({ epoch: (epochs[partition] as number) + 1, frontier: frontiers[partition] });
              const before = await durableState(config.namespace);
              const stale = {
                partition,
                records: part[0] as SourceRecord[],
                epoch: epochs[partition] as number,
                expectedFrontier: frontiers[partition] as number,
              };
              expect(await first.process(stale, never)).toEqual({ kind: 'fenced', epoch: claimed.epoch });
              expect(await durableState(config.namespace)).toEqual(before);
              epochs[partition] = claimed.epoch;
            }
            // A recreated store (a restart) claims before it decides (a commit sends its own
            // claim, migration 0009) and starts with empty caches: every key reloads.
            if (index === 1 && handover === 'recreated') {
              const claimed = await second.claim(partition, never);
              expect(claimed).toEqual({ epoch: (epochs[partition] as number) + 1, frontier: frontiers[partition] });
              epochs[partition] = claimed.epoch;
            }
            frontiers[partition] = await processAll(
              store,
              partition,
              epochs[partition] as number,
              frontiers[partition] as number,
              part,
            );
          }
        }
        expect(frontiers).toEqual([32, 11]);
        const want = simulated(config, records);
        expect(want.quarantine.length).toBeGreaterThan(8);
        expect(await exported(config.namespace)).toEqual(want);
        // The same through small keyset pages.
        expect(await exported(config.namespace, 2)).toEqual(want);
        expect(await outboxRecords(config.namespace)).toEqual(expectedOutbox(config, records));
      },
    );
  });

  it('keeps raw key and value bytes exactly: null versus empty key, invalid UTF-8', async () => {
    const config = await freshNamespace();
    const store = newStore(config);
    const { epoch } = await store.claim(0, never);
    const records: SourceRecord[] = [
      { partition: 0, offset: 0, key: null, value: post('T1', 1, '2026-03-02', 1) },
      { partition: 0, offset: 1, key: new Uint8Array(0), value: new Uint8Array(0) },
      { partition: 0, offset: 2, key: new Uint8Array([0xc3, 0x28]), value: new Uint8Array([0xff, 0x00, 0x5c, 0x22]) },
      { partition: 0, offset: 3, key: keyOf('widget', 'berlin'), value: null },
    ];
    await processAll(store, 0, epoch, 0, [records]);
    const rows = await admin.query<{ raw_key: Buffer | null; raw_value: Buffer | null }>(
      'SELECT raw_key, raw_value FROM decisions WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1) ORDER BY record_offset',
      [config.namespace],
    );
    expect(rows.rows.map((r) => [r.raw_key, r.raw_value])).toEqual(
      records.map((r) => [r.key === null ? null : Buffer.from(r.key), r.value === null ? null : Buffer.from(r.value)]),
    );
    expect((await exported(config.namespace)).quarantine).toEqual(simulated(config, records).quarantine);
  });

  it('writes one outbox envelope per output version, in version order, and notifies the relay', async () => {
    const config = await freshNamespace();
    const listener = new pg.Client({ connectionString: testDatabaseUrl });
    await listener.connect();
    const notified: string[] = [];
    listener.on('notification', (n) => {
      if (n.channel === outboxChannel && n.payload === config.namespace) notified.push(n.payload);
    });
    await listener.query(`LISTEN ${outboxChannel}`);
    try {
      const store = newStore(config);
      const { epoch } = await store.claim(0, never);
      await processAll(store, 0, epoch, 0, chunks(fixtureRecords(config), 4));
      const outbox = await admin.query<{
        id: string;
        partition: number;
        item: string;
        day: string;
        version: number;
        record_key: Buffer;
        record_value: Buffer;
        published: boolean;
      }>('SELECT * FROM outbox WHERE ns = (SELECT id FROM namespaces WHERE namespace = $1) ORDER BY id', [
        config.namespace,
      ]);
      const versions: OutputVersion[] = [];
      for await (const v of readOutputVersions(db.pool, config.namespace)) versions.push(v);
      // Outbox order is decision order: by cause offset, then day.
      const inCommitOrder = [...versions].sort((a, b) => a.cause.offset - b.cause.offset || (a.day < b.day ? -1 : 1));
      expect(
        outbox.rows.map((r) => [r.partition, r.record_key.toString('utf8'), r.record_value.toString('utf8')]),
      ).toEqual(inCommitOrder.map((v) => [0, outputRecordKey(v), outputRecordValue(v, config.namespace)]));
      expect(outbox.rows.every((r) => r.published === false)).toBe(true);
      // Batches 0–3 and 4–7 create versions, 8–9 too: one notification per committing batch.
      await waitFor(
        async () => notified.length,
        (n) => n === 3,
        'three notifications',
      );
    } finally {
      await listener.end();
    }
  });
});

describe('PostgresState: fences write nothing', () => {
  it('a second instance claims: the first is fenced, by its window read and by the commit itself', async () => {
    const config = await freshNamespace();
    const records = fixtureRecords(config);
    const first = newStore(config);
    const { epoch: firstEpoch } = await first.claim(0, never);
    await processAll(first, 0, firstEpoch, 0, [records.slice(0, 4)]);

    const second = newStore(config);
    expect(await second.claim(0, never)).toEqual({ epoch: 2, frontier: 4 });
    const before = await durableState(config.namespace);
    const stale = { partition: 0, records: records.slice(4, 6), epoch: firstEpoch, expectedFrontier: 4 };
    // The window is read with the partition row: the read already shows the new epoch.
    expect(await first.process(stale, never)).toEqual({ kind: 'fenced', epoch: 2 });
    expect(await newStore(config).process(stale, never)).toEqual({ kind: 'fenced', epoch: 2 });
    // A batch that needs no window (garbage only) reads nothing: the commit's own check fences it.
    const garbage = { ...stale, records: [{ partition: 0, offset: 4, key: null, value: utf8('not json') }] };
    expect(await first.process(garbage, never)).toEqual({ kind: 'fenced', epoch: 2 });
    expect(await durableState(config.namespace)).toEqual(before);

    await processAll(second, 0, 2, 4, chunks(records.slice(4), 2));
    expect(await exported(config.namespace)).toEqual(simulated(config, records));
  });

  it('a frontier other than expected writes nothing; a store object without the claim is fenced', async () => {
    const config = await freshNamespace();
    const records = fixtureRecords(config);
    const a = newStore(config);
    const { epoch } = await a.claim(0, never);
    await processAll(a, 0, epoch, 0, [records.slice(0, 3)]);
    await processAll(a, 0, epoch, 3, [records.slice(3, 5)]);
    const before = await durableState(config.namespace);
    const late = { partition: 0, records: records.slice(3, 5), epoch, expectedFrontier: 3 };
    expect(await a.process(late, never)).toEqual({ kind: 'unexpected_frontier', frontier: 5 });
    // The epoch alone is no longer ownership: another store object never claimed (migration 0009).
    const stranger = { ...late, records: records.slice(5, 6), expectedFrontier: 5 };
    expect(await newStore(config).process(stranger, never)).toEqual({ kind: 'fenced', epoch });
    expect(await durableState(config.namespace)).toEqual(before);

    await processAll(a, 0, epoch, 5, [records.slice(5)]);
    expect(await exported(config.namespace)).toEqual(simulated(config, records));
  });

  it('a batch is all or nothing: a failure in its last table rolls back every row', async () => {
    const config = await freshNamespace();
    const records = fixtureRecords(config);
    const store = newStore(config);
    const { epoch } = await store.claim(0, never);
    await processAll(store, 0, epoch, 0, [records.slice(0, 2)]);
    const fn = `amends_test_fail_${Math.random().toString(36).slice(2, 10)}`;
    await admin.query(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'injected day row failure'; END $$`,
    );
    await admin.query(
      `CREATE TRIGGER ${fn} BEFORE INSERT ON output_days FOR EACH ROW
       WHEN (NEW.ns = ${await namespaceId(admin, config.namespace)}) EXECUTE FUNCTION ${fn}()`,
    );
    const before = await durableState(config.namespace);
    const batch = { partition: 0, records: records.slice(2, 7), epoch, expectedFrontier: 2 };
    try {
      const failure = await store.process(batch, never).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(StoreFailure);
      expect(failure).toMatchObject({ code: 'failed_before_commit', message: /injected day row failure/ });
      expect(await durableState(config.namespace)).toEqual(before);
    } finally {
      await admin.query(`DROP TRIGGER ${fn} ON output_days`);
      await admin.query(`DROP FUNCTION ${fn}()`);
    }
    // The same records again (the cache was for 7, so this reloads from PostgreSQL).
    await processAll(store, 0, epoch, 2, [records.slice(2, 7), records.slice(7)]);
    expect(await exported(config.namespace)).toEqual(simulated(config, records));
  });
});

/** A database handle whose sessions pass through a PostgreSQL fault proxy. */
async function throughProxy() {
  const { proxy, url } = await PgFaultProxy.start(testDatabaseUrl);
  const proxied = await Database.open(url, 'amends-test postgres-state proxied');
  return {
    proxy,
    proxied,
    async close() {
      await proxied.close();
      await proxy.close();
    },
  };
}

/** The store's window reads and batch commits through `proxy`, in order ('read', 'commit'); it never acts. */
function recordStoreStatements(proxy: PgFaultProxy): string[] {
  const events: string[] = [];
  proxy.arm({
    when: (m) => {
      const name = bindStatementName(m);
      if (name === storeStatementNames.loadWindow) events.push('read');
      if (name === storeStatementNames.commitBatch) events.push('commit');
      return false;
    },
    action: 'drop_reply',
  });
  return events;
}

/** Three records of one key on partition 0; the third corrects the first's transaction. */
function prefetchRecords(): SourceRecord[] {
  const widget = keyOf('widget', 'berlin');
  return [post('T1', 1, '2026-03-01', 5), post('T2', 1, '2026-03-02', 3), post('T1', 2, '2026-03-02', 4)].map(
    (value, offset) => ({ partition: 0, offset, key: widget, value }),
  );
}

describe('PostgresState: lost replies and cancellation', () => {
  const commitBind = (m: { type: string; body: Buffer }) => bindStatementName(m) === storeStatementNames.commitBatch;

  it('a COMMIT whose reply is lost is unknown, and the durable state shows it committed', async () => {
    const config = await freshNamespace();
    const records = fixtureRecords(config);
    const link = await throughProxy();
    try {
      const store = newStore(config, link.proxied);
      const { epoch } = await store.claim(0, never);
      await processAll(store, 0, epoch, 0, [records.slice(0, 3)]);
      link.proxy.arm({ when: commitBind, action: 'drop_after_forward' });
      const failure = await store
        .process({ partition: 0, records: records.slice(3, 6), epoch, expectedFrontier: 3 }, never)
        .catch((e: unknown) => e);
      expect(link.proxy.fired).toBe(1);
      expect(failure).toBeInstanceOf(StoreFailure);
      expect(failure).toMatchObject({ code: 'unknown_outcome' });
      // Resolution by observation (worker.md §6): same epoch, frontier = last + 1 → committed.
      await waitFor(
        () => store.observe(0, never),
        (row) => row.frontier === 6,
        'the frontier to show the commit',
      );
      // Continue without reapplying: the store's candidate state for frontier 6 is used.
      await processAll(store, 0, epoch, 6, [records.slice(6)]);
      expect(await exported(config.namespace)).toEqual(simulated(config, records));
    } finally {
      await link.close();
    }
  });

  it('a connection dropped before the COMMIT reaches the server: unknown, observed not committed, retried', async () => {
    const config = await freshNamespace();
    const records = fixtureRecords(config);
    const link = await throughProxy();
    try {
      const store = newStore(config, link.proxied);
      const { epoch } = await store.claim(0, never);
      await processAll(store, 0, epoch, 0, [records.slice(0, 3)]);
      const before = await durableState(config.namespace);
      link.proxy.arm({ when: commitBind, action: 'drop_before_forward' });
      const batch = { partition: 0, records: records.slice(3, 6), epoch, expectedFrontier: 3 };
      const failure = await store.process(batch, never).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(StoreFailure);
      expect((failure as StoreFailure).code).toMatch(/^(unknown_outcome|failed_before_commit)$/);
      expect(await store.observe(0, never)).toEqual({ epoch, frontier: 3 });
      expect(await durableState(config.namespace)).toEqual(before);
      // Not committed: retry the same records (the candidate cache for 6 is dropped, keys reload).
      await processAll(store, 0, epoch, 3, [records.slice(3, 6), records.slice(6)]);
      expect(await exported(config.namespace)).toEqual(simulated(config, records));
    } finally {
      await link.close();
    }
  });

  it('cancelling a claim blocked on the row lock rejects at once and leaves no session or transaction', async () => {
    const config = await freshNamespace();
    const store = newStore(config);
    expect(await store.claim(0, never)).toEqual({ epoch: 1, frontier: 0 });
    const blocker = new pg.Client({ connectionString: testDatabaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM partitions WHERE namespace = $1 AND partition = 0 FOR UPDATE', [
        config.namespace,
      ]);
      const blockerPid = (await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      const controller = new AbortController();
      const claiming = store.claim(0, controller.signal).catch((e: unknown) => e);
      const storePid = store.backendPid;
      expect(storePid).toBeGreaterThan(0);
      const blockedBy = await waitFor(
        async () =>
          (await admin.query<{ blockers: number[] }>('SELECT pg_blocking_pids($1) AS blockers', [storePid])).rows[0]
            ?.blockers ?? [],
        (pids) => pids.length > 0,
        'the claim to wait on the row lock',
      );
      expect(blockedBy).toEqual([blockerPid]);

      const started = Date.now();
      controller.abort();
      const failure = await claiming;
      expect(Date.now() - started).toBeLessThan(500);
      expect(failure).toBeInstanceOf(StoreFailure);
      // The claim statement was in flight: it might have committed, so the outcome is unknown.
      expect(failure).toMatchObject({ code: 'unknown_outcome' });
      // The server cancelled the waiting statement and the session is gone: nothing stays open.
      await waitFor(
        async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [storePid])).rowCount,
        (n) => n === 0,
        'the cancelled session to end',
      );
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    // The cancelled claim installed nothing; the store reconnects for the next call.
    expect(await store.observe(0, never)).toEqual({ epoch: 1, frontier: 0 });
    expect(await store.claim(0, never)).toEqual({ epoch: 2, frontier: 0 });
  });

  /** Holds the partition row lock from another session until `release`. */
  async function holdRowLock(namespace: string) {
    const blocker = new pg.Client({ connectionString: testDatabaseUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM partitions WHERE namespace = $1 AND partition = 0 FOR UPDATE', [namespace]);
    const pid = (await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    return {
      pid,
      async release() {
        await blocker.query('ROLLBACK');
        await blocker.end();
      },
    };
  }

  const blockingPids = async (pid: number | undefined) =>
    (await admin.query<{ blockers: number[] }>('SELECT pg_blocking_pids($1) AS blockers', [pid])).rows[0]?.blockers ??
    [];

  it('a commit that waits past lock_timeout fails before commit and writes nothing', async () => {
    // The sessions' own 5 s (postgres-schema.test.ts checks it) shortened to 1 s through the
    // URL, which node-postgres lets override it: the same failure, 4 s sooner (twice a run,
    // as this file also runs on PostgreSQL 18).
    const url = new URL(testDatabaseUrl);
    url.searchParams.set('lock_timeout', '1000');
    const impatient = await Database.open(url.toString(), 'amends-test impatient');
    try {
      expect((await impatient.pool.query('SHOW lock_timeout')).rows[0]).toEqual({ lock_timeout: '1s' });
      const config = await freshNamespace();
      const records = fixtureRecords(config);
      const store = newStore(config, impatient);
      const { epoch } = await store.claim(0, never);
      await processAll(store, 0, epoch, 0, [records.slice(0, 2)]);
      const before = await durableState(config.namespace);
      const lock = await holdRowLock(config.namespace);
      try {
        const batch = { partition: 0, records: records.slice(2, 4), epoch, expectedFrontier: 2 };
        const failure = await store.process(batch, never).catch((e: unknown) => e);
        expect(failure).toBeInstanceOf(StoreFailure);
        expect(failure).toMatchObject({ code: 'failed_before_commit', message: /lock timeout/ });
      } finally {
        await lock.release();
      }
      expect(await durableState(config.namespace)).toEqual(before);
      await processAll(store, 0, epoch, 2, [records.slice(2)]);
      expect(await exported(config.namespace)).toEqual(simulated(config, records));
      await Promise.all(openStores.splice(0).map((s) => s.close()));
    } finally {
      await impatient.close();
    }
  });

  it('cancelling a commit blocked on the row lock is unknown, cancels it in the server, and commits nothing', async () => {
    const config = await freshNamespace();
    const records = fixtureRecords(config);
    const store = newStore(config);
    const { epoch } = await store.claim(0, never);
    await processAll(store, 0, epoch, 0, [records.slice(0, 2)]);
    const before = await durableState(config.namespace);
    const lock = await holdRowLock(config.namespace);
    const storePid = store.backendPid;
    try {
      const controller = new AbortController();
      const batch = { partition: 0, records: records.slice(2, 4), epoch, expectedFrontier: 2 };
      const processing = store.process(batch, controller.signal).catch((e: unknown) => e);
      expect(
        await waitFor(
          () => blockingPids(storePid),
          (p) => p.length > 0,
          'the commit to wait',
        ),
      ).toEqual([lock.pid]);
      controller.abort();
      expect(await processing).toMatchObject({ code: 'unknown_outcome' });
      await waitFor(
        async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [storePid])).rowCount,
        (n) => n === 0,
        'the cancelled session to end',
      );
    } finally {
      await lock.release();
    }
    // Resolution by observation: same epoch, frontier as expected → not committed; retry.
    expect(await store.observe(0, never)).toEqual({ epoch, frontier: 2 });
    expect(await durableState(config.namespace)).toEqual(before);
    await processAll(store, 0, epoch, 2, [records.slice(2)]);
    expect(await exported(config.namespace)).toEqual(simulated(config, records));
  });

  it('an already cancelled call sends nothing and fails before commit', async () => {
    const config = await freshNamespace();
    const store = newStore(config);
    const aborted = AbortSignal.abort();
    const batch = { partition: 0, records: fixtureRecords(config).slice(0, 1), epoch: 1, expectedFrontier: 0 };
    const outcomes: unknown[] = await Promise.all([
      store.claim(0, aborted).catch((e: unknown) => e),
      store.process(batch, aborted).catch((e: unknown) => e),
    ]);
    // A batch whose window read began when it was polled is cancelled the same way.
    store.prefetch(batch.records);
    outcomes.push(await store.process(batch, aborted).catch((e: unknown) => e));
    for (const failure of outcomes) expect(failure).toMatchObject({ code: 'failed_before_commit' });
    expect((await durableState(config.namespace)).partitions).toEqual([]);
  });
});

/** Every plan node of an EXPLAIN (ANALYZE, FORMAT JSON) result, depth first. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}
function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

describe('PostgresState: cost follows the work, not the history', () => {
  const historyTxns = 50_000;
  const days = Array.from({ length: 500 }, (_, i) => new Date(Date.UTC(2026, 2, 1 + i)).toISOString().slice(0, 10));
  const historyRecords = (): SourceRecord[] =>
    Array.from({ length: historyTxns }, (_, i) => ({
      partition: 0,
      offset: i,
      key: keyOf('widget', 'berlin'),
      value: post(`H${i}`, 1, days[Math.floor(i / (historyTxns / days.length))] as string, 1),
    }));

  it('a claim and the first batch after it read the batch window only, with 50,000 transactions behind', async () => {
    const config = await freshNamespace();
    const writer = newStore(config);
    const { epoch } = await writer.claim(0, never);
    await processAll(writer, 0, epoch, 0, chunks(historyRecords(), 5_000));

    // A restarted worker: a new store object claims and decides one new transaction on the latest day.
    const restarted = newStore(config);
    const claimed = await restarted.claim(0, never);
    expect(claimed).toEqual({ epoch: epoch + 1, frontier: historyTxns });
    const next = {
      partition: 0,
      offset: historyTxns,
      key: keyOf('widget', 'berlin'),
      value: post('N1', 1, days.at(-1) as string, 7),
    };
    // The exact window statement with the exact values that batch sends, on the same state, before it.
    const needs = batchNeeds([screenRecord(next, config)]);
    const explained = await admin.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${loadWindowSql}`,
      loadWindowValues(config.namespace, await namespaceId(db.pool, config.namespace), 0, needs),
    );
    expect(
      await restarted.process(
        { partition: 0, records: [next], epoch: claimed.epoch, expectedFrontier: historyTxns },
        never,
      ),
    ).toEqual({ kind: 'acknowledged', frontier: historyTxns + 1 });

    // Index steps only, and a few rows: the transaction's authority (absent), the latest day
    // (from the earliest touched day on) and the shown day before it (the carried closing).
    const nodes = planNodes((explained.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan);
    const onLedger = nodes.filter((n) => n['Relation Name'] === 'authority' || n['Relation Name'] === 'output_days');
    expect(onLedger.length).toBeGreaterThan(0);
    for (const n of onLedger) {
      expect(n['Node Type'], JSON.stringify(n)).toMatch(/^Index (Only )?Scan$/);
      expect(n['Rows Removed by Filter'] ?? 0).toBe(0);
    }
    const rowsRead = onLedger.reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);
    expect(rowsRead).toBe(2);
    // What the worker committed is what simulate says for the whole history.
    expect(await exported(config.namespace)).toEqual(simulated(config, [...historyRecords(), next]));
  });

  it('a batch is decided on what the last commit left, without a read; an evicted old txn is read again', async () => {
    const config = await freshNamespace();
    const link = await throughProxy();
    try {
      const events = recordStoreStatements(link.proxy);
      // One authority entry and two days per key: T1 is evicted by T2, the first day by the third.
      const store = newStore(config, link.proxied, { keysMax: 4, daysPerKeyMax: 2, txnsPerKeyMax: 1 });
      const { epoch } = await store.claim(0, never);
      const widget = keyOf('widget', 'berlin');
      const values = [
        post('T1', 1, '2026-03-01', 5),
        post('T2', 1, '2026-03-02', 3),
        post('T3', 1, '2026-03-03', 1),
        post('T3', 2, '2026-03-03', 2), // a correction of the held transaction
        post('T1', 2, '2026-03-03', 7), // T1 is not held: taken as new, found stored, read and decided again
        post('T4', 1, '2026-03-04', 1),
      ];
      const records = values.map((value, offset) => ({ partition: 0, offset, key: widget, value }));
      await processAll(store, 0, epoch, 0, chunks(records, 1));
      // The first batch after the claim reads; the fifth reads after its refused commit; no other.
      const count = (what: string) => events.filter((e) => e === what).length;
      expect({ reads: count('read'), commits: count('commit') }).toEqual({ reads: 2, commits: records.length + 1 });
      expect(await exported(config.namespace)).toEqual(simulated(config, records));
    } finally {
      await link.close();
    }
  });

  it("prefetch reads a claimed partition's first windows before process; one read under an older epoch is read again", async () => {
    const config = await freshNamespace();
    const link = await throughProxy();
    try {
      const events = recordStoreStatements(link.proxy);
      const records = prefetchRecords();
      const store = newStore(config, link.proxied);
      const { epoch } = await store.claim(0, never);
      store.prefetch(records.slice(0, 2));
      await waitFor(
        async () => events.length,
        (n) => n === 1,
        'the prefetch read',
      );
      events.push('process');
      const first = { partition: 0, records: records.slice(0, 2), epoch, expectedFrontier: 0 };
      expect(await store.process(first, never)).toEqual({ kind: 'acknowledged', frontier: 2 });
      expect(events).toEqual(['read', 'process', 'commit']);

      // Another process polled before its claim: what it read belongs to the older epoch.
      events.length = 0;
      const later = newStore(config, link.proxied);
      later.prefetch(records.slice(2));
      await waitFor(
        async () => events.length,
        (n) => n === 1,
        'the prefetch read',
      );
      const claimed = await later.claim(0, never);
      const second = { partition: 0, records: records.slice(2), epoch: claimed.epoch, expectedFrontier: 2 };
      expect(await later.process(second, never)).toEqual({ kind: 'acknowledged', frontier: 3 });
      expect(events).toEqual(['read', 'read', 'commit']);
      expect(await exported(config.namespace)).toEqual(simulated(config, records));
    } finally {
      await link.close();
    }
  });

  it('prefetch reads nothing for a partition whose batch is being committed (the group polls meanwhile)', async () => {
    const config = await freshNamespace();
    const link = await throughProxy();
    try {
      const events = recordStoreStatements(link.proxy);
      const records = prefetchRecords();
      const store = newStore(config, link.proxied);
      const { epoch } = await store.claim(0, never);
      // The first batch after the claim reads its windows; the next poll comes while it commits.
      const first = store.process({ partition: 0, records: records.slice(0, 2), epoch, expectedFrontier: 0 }, never);
      store.prefetch(records.slice(2));
      expect(await first).toEqual({ kind: 'acknowledged', frontier: 2 });
      // The second batch is decided on what the first commit left (the cache): no read at all.
      const second = { partition: 0, records: records.slice(2), epoch, expectedFrontier: 2 };
      expect(await store.process(second, never)).toEqual({ kind: 'acknowledged', frontier: 3 });
      expect(events).toEqual(['read', 'commit', 'commit']);
      expect(await exported(config.namespace)).toEqual(simulated(config, records));
    } finally {
      await link.close();
    }
  });

  it('the batch statements probe authority and days per transaction and key, whatever the statistics', async () => {
    // A new database's tables have no statistics: a cached generic plan then took a namespace
    // for a handful of rows and read all of its authority into a hash join on every batch.
    const schemas = new TestSchemas(admin, 'amends_test_plans');
    const url = urlForSchema(await schemas.fresh());
    const fresh = await Database.open(url, 'amends-test plans');
    const session = new pg.Client({ connectionString: url });
    await session.connect();
    try {
      const config = configFor(testName());
      await registerNamespace(fresh.pool, { source_topic: `${config.namespace}-topic`, config });
      const store = newStore(config, fresh);
      const { epoch } = await store.claim(0, never);
      await processAll(store, 0, epoch, 0, chunks(historyRecords().slice(0, 10_000), 2_000));
      await session.query('SET plan_cache_mode = force_generic_plan');
      for (const [name, sql, parameters] of [
        ['amends_plan_window', loadWindowSql, 8],
        ['amends_plan_commit', commitBatchSql, 51],
      ] as const) {
        await session.query(`PREPARE ${name} AS ${sql}`);
        const nulls = Array.from({ length: parameters }, () => 'NULL').join(', ');
        const plan = await session.query(`EXPLAIN (FORMAT JSON) EXECUTE ${name}(${nulls})`);
        const nodes = planNodes((plan.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan);
        // Reads only: an upsert's conflict check is an index probe by construction.
        const reads = nodes.filter(
          (n) =>
            n['Node Type'] !== 'ModifyTable' &&
            (n['Relation Name'] === 'authority' || n['Relation Name'] === 'output_days'),
        );
        expect(reads.length, name).toBeGreaterThan(0);
        for (const n of reads) {
          const cond = String(n['Index Cond'] ?? '');
          expect(n['Node Type'], `${name}: ${JSON.stringify(n)}`).toMatch(/^Index (Only )?Scan( Backward)?$/);
          expect(cond, `${name}: ${JSON.stringify(n)}`).toMatch(/location = /);
          if (n['Relation Name'] === 'authority') expect(cond, name).toMatch(/txn = /);
        }
      }
    } finally {
      await session.end();
      await fresh.close();
      await schemas.dropAll();
    }
  });

  it('a correction of the first day reads the days after it, and re-versions each of them', async () => {
    const config = await freshNamespace();
    const store = newStore(config);
    const { epoch } = await store.claim(0, never);
    const history = historyRecords().slice(0, 5_000);
    await processAll(store, 0, epoch, 0, [history]);
    const correction = {
      partition: 0,
      offset: 5_000,
      key: keyOf('widget', 'berlin'),
      value: post('H0', 2, days[0] as string, -1),
    };
    const needs = batchNeeds([screenRecord(correction, config)]);
    const explained = await admin.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${loadWindowSql}`,
      loadWindowValues(config.namespace, await namespaceId(db.pool, config.namespace), 0, needs),
    );
    const nodes = planNodes((explained.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan);
    const dayRows = nodes
      .filter((n) => n['Relation Name'] === 'output_days')
      .reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);
    // 5,000 transactions at 100 a day: 50 days, every one of them in the window.
    expect(dayRows).toBe(50);
    await processAll(store, 0, epoch, 5_000, [[correction]]);
    expect(await exported(config.namespace)).toEqual(simulated(config, [...history, correction]));
  });
});
