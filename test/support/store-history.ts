/**
 * A history written into a store as the worker writes it (PostgresState, the store seam the
 * worker's machines call), without a broker: the namespace registered, each partition claimed,
 * its records committed in batches in offset order. What the tables then hold is what a worker
 * would have committed for the same records.
 */
import type { Manifest, NamespaceConfig } from '../../src/domain/config.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { registerNamespace } from '../../src/io/store/namespace-registry.js';
import type { Database } from '../../src/io/store/postgres.js';
import { PostgresState } from '../../src/io/store/postgres-state.js';

const never = new AbortController().signal;

/** Registers `config`'s namespace; returns its manifest. */
export async function registerTestNamespace(db: Database, config: NamespaceConfig): Promise<Manifest> {
  const manifest: Manifest = { source_topic: `${config.namespace}-topic`, config };
  await registerNamespace(db.pool, manifest);
  return manifest;
}

/** Commits `records` (any partitions, each in offset order) in batches of at most `batchSize`. */
export async function writeHistory(
  db: Database,
  config: NamespaceConfig,
  records: readonly SourceRecord[],
  batchSize: number,
): Promise<void> {
  const store = new PostgresState(db, config, { workerId: `history-${config.namespace}` });
  try {
    for (let partition = 0; partition < config.partitions; partition++) {
      const own = records.filter((r) => r.partition === partition);
      if (own.length === 0) continue;
      const { epoch, frontier } = await store.claim(partition, never);
      let expected = frontier;
      for (let i = 0; i < own.length; i += batchSize) {
        const batch = own.slice(i, i + batchSize);
        const outcome = await store.process({ partition, records: batch, epoch, expectedFrontier: expected }, never);
        if (outcome.kind !== 'acknowledged') throw new Error(`batch at ${partition}:${expected}: ${outcome.kind}`);
        expected = outcome.frontier;
      }
    }
  } finally {
    await store.close();
  }
}
