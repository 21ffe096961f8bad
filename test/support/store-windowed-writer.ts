/**
 * How the builds of schemas 5 and 6 wrote a batch, around their own statements (frozen in
 * store-v5-writer.ts and store-v6-writer.ts): read each key's window with the build's window
 * statement, decide the batch on it with the engine (unchanged since), and commit with the
 * build's batch statement, as those builds' `PostgresState.process` did. Test-only.
 */
import type pg from 'pg';
import { type NamespaceConfig, stockKeyId } from '../../src/domain/config.js';
import { type DecideResult, decideWithKeyState, screenRecord } from '../../src/domain/decide.js';
import { batchNeeds, type DayRow, dayRowChanges, type KeyNeeds, windowState } from '../../src/domain/key-window.js';
import type { AuthorityEntry, DayOutput, KeyState } from '../../src/domain/ledger-state.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { claimAsOldBuild, oldBatchValues } from './store-old-batch.js';

/** One older build's statements, and what each needs beyond the parameters both builds share. */
export interface WindowedBuild {
  schema: number;
  loadWindowSql: string;
  commitBatchSql: string;
  /** Parameters after the window statement's $1–$7 (schema 6: the namespace's id). */
  loadTail: (nsId: number) => unknown[];
  /** Parameters after the batch statement's $1–$45 (schema 6: the id, no transaction taken as new). */
  commitTail: (nsId: number) => unknown[];
}

/** A key's window as such a build read it. */
interface OldWindow {
  item: string;
  location: string;
  before: DayRow[];
  causes: Map<string, number>;
  state: KeyState;
}

/** Claims the partition and commits `batches` of it as `build` did; returns the frontier. */
export async function writeAsWindowedBuild(
  build: WindowedBuild,
  client: pg.ClientBase,
  config: NamespaceConfig,
  partition: number,
  batches: readonly SourceRecord[][],
): Promise<number> {
  const claimed = await claimAsOldBuild(client, config.namespace, partition, `schema-v${build.schema}`);
  // Schema 6 keys the per-record rows by the namespace's id (migration 0006); before, by its text.
  const nsId =
    build.schema >= 6
      ? Number((await client.query('SELECT id FROM namespaces WHERE namespace = $1', [config.namespace])).rows[0]?.id)
      : 0;
  let frontier = claimed.frontier;
  for (const records of batches) {
    const screened = records.map((record) => screenRecord(record, config));
    const needs = batchNeeds(screened);
    const keys =
      needs.size > 0
        ? await loadOldWindows(client, build, [config.namespace, partition], needs, nsId)
        : new Map<string, OldWindow>();
    const results: DecideResult[] = screened.map((s, i) => {
      if (s.kind === 'decided') return s.result;
      const window = keys.get(stockKeyId(s.stockKey.item, s.stockKey.location)) as OldWindow;
      return decideWithKeyState(records[i] as SourceRecord, s.envelope, s.stockKey, window.state);
    });
    const next = (records[records.length - 1] as SourceRecord).offset + 1;
    const days = changedDays(keys, results);
    const values = [
      ...oldBatchValues(config, partition, claimed.epoch, frontier, next, records, results),
      days.map((d) => d.item),
      days.map((d) => d.location),
      days.map((d) => d.row.day),
      days.map((d) => d.row.output.version),
      days.map((d) => d.row.output.closing),
      days.map((d) => d.row.output.status),
      days.map((d) => d.row.output.retracted),
      days.map((d) => d.cause),
      days.map((d) => d.row.total.qty),
      days.map((d) => d.row.total.posts),
      ...build.commitTail(nsId),
    ];
    const result = await client.query(build.commitBatchSql, values);
    if (result.rows[0]?.committed !== 1) throw new Error(`the v${build.schema} batch at ${frontier} did not commit`);
    frontier = next;
  }
  return frontier;
}

/** The build's window read (its `loadWindowValues` and `windowsOf`, without the checks). */
async function loadOldWindows(
  client: pg.ClientBase,
  build: WindowedBuild,
  [namespace, partition]: [string, number],
  needs: ReadonlyMap<string, KeyNeeds>,
  nsId: number,
): Promise<Map<string, OldWindow>> {
  const revisions = [...needs.values()].flatMap((n) =>
    n.revisions.map((r) => ({ item: n.stockKey.item, location: n.stockKey.location, ...r })),
  );
  const result = await client.query(build.loadWindowSql, [
    namespace,
    partition,
    revisions.map((r) => r.item),
    revisions.map((r) => r.location),
    revisions.map((r) => r.txn),
    revisions.map((r) => r.rev),
    revisions.map((r) => r.day),
    ...build.loadTail(nsId),
  ]);
  const found = result.rows[0] as { authority: unknown[][]; days: unknown[][] };
  const rows = new Map(
    [...needs].map(([id, n]) => [
      id,
      {
        need: n,
        authority: new Map<string, AuthorityEntry>(),
        days: [] as DayRow[],
        causes: new Map<string, number>(),
      },
    ]),
  );
  const rowsOf = (item: unknown, location: unknown) => rows.get(stockKeyId(String(item), String(location)));
  for (const [item, location, txn, rev, op, day, qty] of found.authority) {
    const entry = { rev: Number(rev), op, day, qty: qty === null ? null : Number(qty) } as AuthorityEntry;
    rowsOf(item, location)?.authority.set(String(txn), entry);
  }
  for (const [item, location, day, version, closing, status, retracted, qty, posts, cause] of found.days) {
    const output = { version: Number(version), closing: closing === null ? null : Number(closing), status, retracted };
    const key = rowsOf(item, location);
    key?.days.push({
      day: String(day),
      total: { qty: Number(qty), posts: Number(posts) },
      output: output as DayOutput,
    });
    key?.causes.set(String(day), Number(cause));
  }
  return new Map(
    [...rows].map(([id, r]) => [
      id,
      {
        item: r.need.stockKey.item,
        location: r.need.stockKey.location,
        before: r.days,
        causes: r.causes,
        state: windowState(r.authority, r.days),
      },
    ]),
  );
}

/** The builds' `changedDays`: every day row the batch changed, with its latest version's cause. */
function changedDays(
  keys: ReadonlyMap<string, OldWindow>,
  results: readonly DecideResult[],
): { item: string; location: string; row: DayRow; cause: number }[] {
  const newCauses = new Map<string, number>();
  for (const r of results) {
    for (const v of r.newVersions) newCauses.set(`${stockKeyId(v.item, v.location)}\u0000${v.day}`, v.cause.offset);
  }
  return [...keys].flatMap(([id, w]) =>
    dayRowChanges(w.before, w.state).map((row) => {
      const cause = newCauses.get(`${id}\u0000${row.day}`) ?? w.causes.get(row.day);
      if (cause === undefined) throw new Error(`day ${row.day} of ${id} changed without a cause`);
      return { item: w.item, location: w.location, row, cause };
    }),
  );
}
