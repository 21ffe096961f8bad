/**
 * A database that went back in time (issue 33): an asynchronous failover or a restored backup
 * loses the last commits, claims among them, so the next claim hands out an epoch number that
 * a worker of the lost timeline still holds. The production store must not let that worker
 * commit, nor tell it, when it re-observes, that the partition is still its own. The lost
 * claim is made here by putting the partition row back as it was before it (what a restore
 * does), on the real PostgreSQL. A configuration revision lost the same way cannot be decided
 * under again: the store says so instead of deciding under the older configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigFile, NamespaceConfig } from '../../src/domain/config.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { registerNamespace } from '../../src/io/store/namespace-registry.js';
import { Database } from '../../src/io/store/postgres.js';
import { PostgresState } from '../../src/io/store/postgres-state.js';
import { reviseConfig } from '../../src/io/store/revise-config.js';
import { manifestFor } from '../support/bound-namespace-rows.js';
import { testDatabaseUrl, testName } from '../support/endpoints.js';

let db: Database;
const stores: PostgresState[] = [];
const never = new AbortController().signal;
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));

beforeAll(async () => {
  db = await Database.open(testDatabaseUrl, 'amends-test store rollback');
});
afterAll(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await db?.close();
});

function storeOf(config: NamespaceConfig, workerId: string): PostgresState {
  const store = new PostgresState(db, config, { workerId, warmUpWaitMs: 0 });
  stores.push(store);
  return store;
}

/** A post of widget@berlin at `offset` of partition 0. */
function post(offset: number, txn: string): SourceRecord {
  const envelope = {
    schema: 1,
    txn,
    rev: 1,
    op: 'post',
    item: 'widget',
    location: 'berlin',
    day: '2026-03-02',
    qty: 5,
  };
  return {
    partition: 0,
    offset,
    key: utf8(JSON.stringify({ item: 'widget', location: 'berlin' })),
    value: utf8(JSON.stringify(envelope)),
  };
}

describe('a claim lost when the database went back in time', () => {
  it("fences the lost timeline's owner although the next claim hands out its epoch again", async () => {
    const { config } = manifestFor(testName());
    await registerNamespace(db.pool, { source_topic: `${config.namespace}-topic`, config });
    const lost = storeOf(config, 'lost-timeline');
    const first = await lost.claim(0, never);
    const row = { namespace: config.namespace, partition: 0 };
    // The commit of a second claim by the same worker is lost with the database's last commits.
    const mine = await lost.claim(0, never);
    expect(mine.epoch).toBe(first.epoch + 1);
    // The restore: the row's epoch as before that claim (its claim too, which the next claim
    // replaces either way; left alone, so the test also runs on a build without claims).
    await db.pool.query('UPDATE partitions SET epoch = $3 WHERE namespace = $1 AND partition = $2', [
      row.namespace,
      row.partition,
      first.epoch,
    ]);
    // Another worker claims on the restored database: the same epoch number, another claim.
    const other = storeOf(config, 'restored-timeline');
    const theirs = await other.claim(0, never);
    expect(theirs.epoch).toBe(mine.epoch);

    const request = { partition: 0, epoch: mine.epoch, expectedFrontier: 0, records: [post(0, 'T1')] };
    expect(await lost.process(request, never)).toEqual({ kind: 'fenced', epoch: theirs.epoch });
    expect(await lost.observe(0, never)).toEqual({ epoch: theirs.epoch, frontier: 0, elsewhere: true });

    expect(await other.process({ ...request, epoch: theirs.epoch }, never)).toEqual({
      kind: 'acknowledged',
      frontier: 1,
    });
    expect(await other.observe(0, never)).toEqual({ epoch: theirs.epoch, frontier: 1 });
    const decided = await db.pool.query(
      'SELECT count(*)::int AS n FROM decisions d JOIN namespaces n ON n.id = d.ns WHERE n.namespace = $1',
      [row.namespace],
    );
    expect(decided.rows[0].n).toBe(1);
  });
});

describe('a configuration revision lost when the database went back in time', () => {
  it('answers revision_lost, writing nothing, where deciding again would publish other versions', async () => {
    const manifest = manifestFor(testName());
    const { config } = manifest;
    await registerNamespace(db.pool, manifest);
    const store = storeOf(config, 'decided-under-revision-2');
    const { epoch } = await store.claim(0, never);
    await store.claim(1, never); // a revision starts at every partition's frontier
    const file: ConfigFile = {
      schema_version: 1,
      ledger_origin: config.ledger_origin,
      stock_keys: [
        { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
        { item: 'gadget', location: 'paris', partition: 0, opening: 5, threshold: 1 },
      ],
    };
    await reviseConfig(db, manifest, file, 'test revision');
    // Its first commit is refused for the revision; it reads the chain and decides under revision 2.
    const first = { partition: 0, epoch, expectedFrontier: 0, records: [post(0, 'T1')] };
    expect(await store.process(first, never)).toEqual({ kind: 'acknowledged', frontier: 1 });
    // The restore of a backup taken before the revision: the revision is gone, the row says 1.
    await db.pool.query('DELETE FROM config_revisions WHERE namespace = $1', [config.namespace]);
    await db.pool.query('UPDATE partitions SET config_revision = 1 WHERE namespace = $1', [config.namespace]);

    const next = { partition: 0, epoch, expectedFrontier: 1, records: [post(1, 'T2')] };
    expect(await store.process(next, never)).toEqual({ kind: 'revision_lost', held: 1, known: 2 });
    const decided = await db.pool.query(
      'SELECT count(*)::int AS n FROM decisions d JOIN namespaces n ON n.id = d.ns WHERE n.namespace = $1',
      [config.namespace],
    );
    expect(decided.rows[0].n).toBe(1);
  });
});
