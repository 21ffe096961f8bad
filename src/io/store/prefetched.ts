/**
 * A polled batch's work begun early (postgres-state.ts `prefetch`): its screening, under the
 * configuration revision then known, and its windows when read. `process` takes it only for
 * exactly the same records under the same revision, and its windows only when they were read
 * at the request's epoch and frontier.
 */

import type { Screened } from '../../domain/decide.js';
import type { KeyNeeds } from '../../domain/key-window.js';
import { untilAborted } from '../../kernel/abortable.js';
import type { ProcessRequest, SourceRecord } from '../../machines/ports.js';
import type { LoadedWindows } from './batch-windows.js';

export interface Prefetched {
  records: readonly SourceRecord[];
  /** The configuration revision the records were screened under. */
  revision: number;
  screened: Screened[];
  needs: Map<string, KeyNeeds>;
  loaded: Promise<LoadedWindows | undefined> | undefined;
}

/** The prefetch when it is of exactly these records (same partition and offsets) under `revision`. */
export function prefetchOf(
  early: Prefetched | undefined,
  records: readonly SourceRecord[],
  revision: number,
): Prefetched | undefined {
  if (early === undefined || early.records.length !== records.length || early.revision !== revision) return undefined;
  const same = early.records.every((r, i) => r.partition === records[i]?.partition && r.offset === records[i]?.offset);
  return same ? early : undefined;
}

/** The prefetched windows, when they were read at the request's epoch and frontier. */
export async function prefetchedWindows(
  early: Prefetched | undefined,
  request: ProcessRequest,
  signal: AbortSignal,
): Promise<LoadedWindows | undefined> {
  if (early?.loaded === undefined) return undefined;
  // Cancelled: no window, and the batch's own statement fails as every cancelled call does.
  const loaded = await untilAborted(early.loaded, signal, 'reading the batch window').catch(() => undefined);
  const current = loaded?.row.epoch === request.epoch && loaded.row.frontier === request.expectedFrontier;
  return current ? loaded : undefined;
}
