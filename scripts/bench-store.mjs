#!/usr/bin/env node
import { namespaceId, registerNamespace } from '../dist/io/store/namespace-registry.js';
/**
 * Micro-benchmark of the PostgreSQL store alone (src/io/store/postgres-state.ts), run by hand,
 * not by npm test: decides N records of one partition through PostgresState.process at
 * batch sizes 1 and 500 on the local stack and prints records/s. No broker involved.
 *
 *   npm run build && node scripts/bench-store.mjs [N]
 *
 * Each run registers fresh amends-bench-* namespaces (rows stay, like the tests' ones).
 * The input is a plausible ledger: mostly new posts on the latest day, with corrections,
 * redeliveries, cancels and some garbage.
 */
import { Database } from '../dist/io/store/postgres.js';
import { PostgresState } from '../dist/io/store/postgres-state.js';

const url =
  process.env.AMENDS_DATABASE_URL ?? 'postgres://amends:amends-local-only@127.0.0.1:15432/amends?sslmode=disable';
const recordsTotal = Number(process.argv[2] ?? 20_000);
const batchSizes = (process.env.BENCH_BATCH_SIZES ?? '1,500').split(',').map(Number);
const never = new AbortController().signal;
const utf8 = (s) => new Uint8Array(Buffer.from(s, 'utf8'));
const key = utf8(JSON.stringify({ item: 'widget', location: 'berlin' }));

function records(n) {
  const out = [];
  const posted = [];
  for (let offset = 0; offset < n; offset++) {
    const day = `2026-${String(3 + Math.floor(offset / 12_000)).padStart(2, '0')}-${String(1 + (Math.floor(offset / 400) % 28)).padStart(2, '0')}`;
    const roll = offset % 100;
    let value;
    if (roll < 4 && posted.length > 10) {
      // a correction of a recent txn
      const t = posted[posted.length - 1 - (offset % 10)];
      t.rev += 1;
      value = {
        schema: 1,
        txn: t.txn,
        rev: t.rev,
        op: 'post',
        item: 'widget',
        location: 'berlin',
        day: t.day,
        qty: (offset % 7) - 3,
      };
    } else if (roll < 7 && posted.length > 0) {
      // a redelivery
      const t = posted[posted.length - 1];
      value = {
        schema: 1,
        txn: t.txn,
        rev: t.rev,
        op: 'post',
        item: 'widget',
        location: 'berlin',
        day: t.day,
        qty: t.qty,
      };
    } else if (roll === 7 && posted.length > 10) {
      const t = posted[posted.length - 5];
      t.rev += 1;
      value = { schema: 1, txn: t.txn, rev: t.rev, op: 'cancel', item: 'widget', location: 'berlin' };
      t.qty = null;
    } else if (roll === 8) {
      out.push({ partition: 0, offset, key, value: utf8('{"not":"an envelope"}') });
      continue;
    } else {
      const t = { txn: `T${offset}`, rev: 1, day, qty: (offset % 11) - 5 };
      posted.push(t);
      value = { schema: 1, txn: t.txn, rev: 1, op: 'post', item: 'widget', location: 'berlin', day, qty: t.qty };
    }
    if (value.qty === null) delete value.qty;
    out.push({ partition: 0, offset, key, value: utf8(JSON.stringify(value)) });
  }
  return out;
}

/**
 * The machine's floor for one durable commit: a one-row INSERT as its own transaction, one
 * round trip and one WAL flush, into a scratch table dropped afterwards.
 */
async function commitFloor(db) {
  const client = await db.pool.connect();
  const table = `amends_bench_floor_${process.pid}`;
  try {
    await client.query(`CREATE TABLE ${table} (n integer)`);
    const n = 1000;
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++)
      await client.query({ name: 'bench_floor', text: `INSERT INTO ${table} VALUES ($1)`, values: [i] });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { durable_commits_per_s: Math.round(n / seconds), ms_per_commit: Number(((seconds / n) * 1000).toFixed(3)) };
  } finally {
    await client.query(`DROP TABLE IF EXISTS ${table}`);
    client.release();
  }
}

const db = await Database.open(url, 'amends bench-store');
try {
  console.log(JSON.stringify({ commit_floor: await commitFloor(db) }));
  const input = records(recordsTotal);
  for (const size of batchSizes) {
    const namespace = `amends-bench-${Date.now().toString(36)}-${size}`;
    const config = {
      namespace,
      schema_version: 1,
      ledger_origin: '2026-03-01',
      partitions: 2,
      stock_keys: [{ item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 }],
      source_incarnation: `kafka:${'ab'.repeat(16)}`,
    };
    await registerNamespace(db.pool, { source_topic: `${namespace}-topic`, config });
    const store = new PostgresState(db, config, { applicationName: `amends bench-store ${size}` });
    const { epoch } = await store.claim(0, never);
    let frontier = 0;
    const started = process.hrtime.bigint();
    for (let i = 0; i < input.length; i += size) {
      const batch = input.slice(i, i + size);
      const outcome = await store.process({ partition: 0, records: batch, epoch, expectedFrontier: frontier }, never);
      if (outcome.kind !== 'acknowledged') throw new Error(`unexpected ${JSON.stringify(outcome)}`);
      frontier = outcome.frontier;
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const versions = await db.pool.query('SELECT count(*)::int AS n FROM output_versions WHERE ns = $1', [
      await namespaceId(db.pool, namespace),
    ]);
    console.log(
      JSON.stringify({
        batch_size: size,
        records: input.length,
        seconds: Number(seconds.toFixed(3)),
        records_per_s: Math.round(input.length / seconds),
        output_versions: versions.rows[0].n,
      }),
    );
    await store.close();
    // The cache reload path: a new store object (as after a restart) loads the key's whole state.
    const fresh = new PostgresState(db, config, { applicationName: `amends bench-store reload ${size}` });
    const reloadStarted = process.hrtime.bigint();
    const next = { partition: 0, offset: frontier, key, value: utf8('{}') };
    await fresh.process({ partition: 0, records: [next], epoch, expectedFrontier: frontier }, never);
    const reloadMs = Number(process.hrtime.bigint() - reloadStarted) / 1e6;
    console.log(JSON.stringify({ batch_size: size, reload_and_commit_ms: Number(reloadMs.toFixed(1)) }));
    await fresh.close();
  }
  console.log(JSON.stringify({ commit_floor: await commitFloor(db) }));
} finally {
  await db.close();
}
