/**
 * The store's warm-up (postgres-state.ts `warm`): readies the session and the code for the
 * first batch while the worker's group forms. The batch statements, run on a partition that
 * cannot exist, read and write nothing, but parse them and load what they touch (tables,
 * indexes, functions) into the session's caches; the commit carries the synthetic batch of
 * warm-up-batch.ts decided on an empty window, so decoding, the engine and the parameters
 * run (`warmUpRounds` times, in memory) before a real batch needs them.
 */

import { compareCodePoints } from '../../domain/canonical-json.js';
import type { NamespaceConfig } from '../../domain/config.js';
import { screenRecord } from '../../domain/decide.js';
import { batchNeeds, dayRows, earliestTouchedDay, type KeyNeeds } from '../../domain/key-window.js';
import type { AuthorityEntry } from '../../domain/ledger-state.js';
import { assertInvariant } from '../../kernel/invariant.js';
import type { SourceRecord } from '../../machines/ports.js';
import {
  afterCommit,
  changedDays,
  decideOnWindows,
  newCauses,
  windowsOf,
  windowsWithoutHistory,
} from './batch-windows.js';
import { commitBatchValues } from './commit-batch-values.js';
import { type CommitRow, commitBatchSql } from './sql/commit-batch.js';
import { type LoadWindowRow, loadWindowSql, loadWindowValues } from './sql/load-window.js';
import { storeStatementNames } from './sql/statement-names.js';
import { warmUpBatch, warmUpRecordsMax, warmUpRounds } from './warm-up-batch.js';
import type { KeyAfterCommit } from './window-cache.js';

/** What the warm-up got done before a claim stopped it: rounds in memory, and whether it sent its statements. */
export interface WarmUp {
  rounds: number;
  sent: boolean;
}

/**
 * The longest a claim waits for the warm-up (`warm`). A restarted member gets its partitions
 * back about 100 ms after the store's session opens (static membership), before the warm-up
 * is done; a claim that went first fenced the old owner and then decided its first batch on
 * cold code.
 */
export const warmUpWaitMaxMs = 3_000;

/** A partition no claim can create: the warm-up's statements find no row, so they write nothing. */
const noPartition = -1;

/** What the warm-up needs of the store: its configuration, its session, and when to stop. */
export interface WarmUpStore {
  readonly config: NamespaceConfig;
  /** The namespace's id (namespace-registry.ts), as the store reads it once. */
  namespaceId(signal: AbortSignal): Promise<number>;
  /** Runs one statement that commits nothing; `doing` names it in a failure. */
  read<R extends object>(
    query: { name: string; text: string; values: unknown[] },
    signal: AbortSignal,
    doing: string,
  ): Promise<{ rows: R[] }>;
  /** Whether a claim has begun or the store closed: from then on warming would only delay the real work. */
  stopped(): boolean;
}

/** Sends the window read, decides the warm-up batch `warmUpRounds` times, then sends its commit. */
export async function warmUp(store: WarmUpStore, signal: AbortSignal): Promise<WarmUp> {
  const nsId = await store.namespaceId(signal);
  const window = loadWindowValues(store.config.namespace, nsId, noPartition, new Map());
  await store.read({ name: storeStatementNames.warmWindow, text: loadWindowSql, values: window }, signal, 'warm');
  const records = warmUpBatch(store.config, warmUpRecordsMax);
  let commit: unknown[] = [];
  let rounds = 0;
  // Once a claim has begun, warming would only delay the real work: it stops.
  for (; rounds < warmUpRounds && !store.stopped(); rounds++) {
    commit = warmUpCommitValues(store.config, records, nsId);
    // Between rounds the consumer's and the observer's callbacks get their turn.
    await new Promise((resolve) => setImmediate(resolve));
    signal.throwIfAborted();
  }
  if (store.stopped()) return { rounds, sent: false };
  const result = await store.read<CommitRow>(
    { name: storeStatementNames.warmCommit, text: commitBatchSql, values: commit },
    signal,
    'warm',
  );
  assertInvariant(result.rows[0]?.committed === 0, 'the warm-up batch was committed');
  return { rounds, sent: true };
}

/**
 * The commit's parameters of the warm-up batch: its first half decided on empty windows, its
 * second on the windows the first half left, handed over as the load statement returns them
 * (`warmUpWindowRow`), so that reading a window and deciding on history run too.
 */
function warmUpCommitValues(config: NamespaceConfig, records: SourceRecord[], nsId: number): unknown[] {
  const half = Math.floor(records.length / 2);
  const [older, newer] = [records.slice(0, half), records.slice(half)];
  const screenedOlder = older.map((record) => screenRecord(record, config));
  const olderKeys = windowsWithoutHistory(batchNeeds(screenedOlder));
  const olderCauses = newCauses(decideOnWindows(older, screenedOlder, olderKeys));
  const screened = newer.map((record) => screenRecord(record, config));
  const needs = batchNeeds(screened);
  const keys = windowsOf(needs, warmUpWindowRow(needs, afterCommit(noPartition, olderKeys, olderCauses)));
  const results = decideOnWindows(newer, screened, keys);
  const batch = { partition: noPartition, records: newer, epoch: 1, expectedFrontier: half };
  const days = changedDays(keys, newCauses(results));
  return commitBatchValues({
    namespace: config.namespace,
    nsId,
    request: batch,
    results,
    frontier: records.length,
    days,
    assumedNew: [],
    // Never committed (no partition row, no claim), so any revision serves.
    revision: 1,
    claim: null,
  });
}

/**
 * What the load statement would return for `needs` over the keys as `stored` (the warm-up's
 * first half): the stored authority of the batch's transactions, each key's earliest touched
 * day and its days from there on (no carried day: the warm-up's keys start at the origin).
 */
function warmUpWindowRow(
  needs: ReadonlyMap<string, KeyNeeds>,
  stored: ReadonlyMap<string, KeyAfterCommit>,
): LoadWindowRow {
  const found: LoadWindowRow = { epoch: null, frontier: null, claim: null, authority: [], earliest: [], days: [] };
  for (const [id, need] of needs) {
    const key = stored.get(id);
    if (key === undefined) continue;
    const { item, location } = need.stockKey;
    const authority = new Map<string, AuthorityEntry>();
    for (const { txn } of need.revisions) {
      const entry = key.state.authority.get(txn);
      if (entry !== undefined) authority.set(txn, entry);
    }
    for (const [txn, e] of authority) found.authority.push([item, location, txn, e.rev, e.op, e.day, e.qty]);
    const start = earliestTouchedDay(need, authority);
    if (start === undefined) continue;
    found.earliest.push([item, location, start]);
    for (const { day, total, output } of dayRows(key.state)) {
      if (compareCodePoints(day, start) < 0) continue;
      const { version, closing, status, retracted } = output;
      found.days.push([
        item,
        location,
        day,
        version,
        closing,
        status,
        retracted,
        total.qty,
        total.posts,
        key.causes.get(day),
      ]);
    }
  }
  return found;
}
