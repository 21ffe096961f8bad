/**
 * A synthetic batch the store decides, but never commits, while the worker's group forms
 * (warm-up.ts). A restarted worker's first real batch otherwise runs the whole
 * path cold: decoding, screening, the engine, the statement's parameters, and PostgreSQL's
 * first plan of the commit with arrays of a real batch's size. Measured on a 500-record
 * batch: 56 ms cold against 38-40 ms once warm (docs/benchmarks.md).
 *
 * The records are what a busy ledger sends: new posts on consecutive days, corrections of
 * earlier transactions, a redelivery and one garbage value, all on the namespace's first
 * stock key. Pure: nothing here reads or writes anything.
 */
import { addDays } from '../../domain/calendar-day.js';
import { canonicalJson } from '../../domain/canonical-json.js';
import type { NamespaceConfig } from '../../domain/config.js';
import type { SourceRecord } from '../../domain/source-record.js';
import { listedStockKeys, stockKeyTerms } from '../../domain/stock-key-terms.js';

/** Records of the warm-up batch: the largest batch of the scale run's best size. */
export const warmUpRecordsMax = 500;
/**
 * How often the warm-up runs its batch through decoding, the engine and the parameters (in
 * memory; only the last is sent), so that V8 has optimized that code before the first real
 * batch. Measured on a restart with 1.78 million transactions behind it (docs/benchmarks.md):
 * the first 500-record store call took 90-94 ms after one round, 58-80 ms after 6-12, and
 * 33-42 ms (against ~45 ms in steady state) after 24 or 48; 24 rounds take ~0.5 s.
 */
export const warmUpRounds = 24;
/** New posts per day, so the batch touches a few dozen days as a real one does. */
const postsPerDay = 25;
/** Every tenth record corrects the transaction before it (a new revision and quantity). */
const correctionEvery = 10;

const utf8 = new TextEncoder();

/** Up to `records` synthetic source records of the first listed stock key, offsets 0, 1, … */
export function warmUpBatch(config: NamespaceConfig, records: number): SourceRecord[] {
  // A listed key, or under a default rule a key of its own that no ledger needs to hold: the
  // warm-up writes nothing (warm-up.ts), it only has to reach the engine. A table with no key
  // listed warms nothing.
  const key = listedStockKeys(config)[0] ?? stockKeyTerms(config, 'amends-warm-up', 'amends-warm-up');
  if (key === undefined) return [];
  const n = Math.min(Math.max(records, 0), warmUpRecordsMax);
  const keyBytes = utf8.encode(canonicalJson({ item: key.item, location: key.location }));
  const envelope = (txn: string, rev: number, day: string, qty: number) =>
    utf8.encode(canonicalJson({ day, item: key.item, location: key.location, op: 'post', qty, rev, schema: 1, txn }));
  const batch: SourceRecord[] = [];
  for (let offset = 0; offset < n; offset++) {
    const day = addDays(config.ledger_origin, Math.floor(offset / postsPerDay));
    let value: Uint8Array;
    if (offset === n - 1 && n > 2) value = utf8.encode('{"not":"an envelope"}');
    else if (offset > 0 && offset % correctionEvery === 0) value = envelope(`warm-${offset - 1}`, 2, day, -1);
    else if (offset > 0 && offset % correctionEvery === 5)
      value = (batch[offset - 1] as SourceRecord).value as Uint8Array;
    else value = envelope(`warm-${offset}`, 1, day, (offset % 7) + 1);
    batch.push({ partition: key.partition, offset, key: keyBytes, value });
  }
  return batch;
}
