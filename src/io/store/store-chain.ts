/**
 * The store's copy of its namespace's configuration revisions (docs/design.md#configuration-revisions):
 * which configuration decides the record at (partition, offset), and the revision every
 * commit names. It starts as revision 1 (the registered configuration) and is read again
 * whenever a partition row shows a newer revision than it knows: at a claim, or when a
 * commit was refused for one ('revised'). A read costs one row per revision, never per record.
 */

import type { NamespaceConfig } from '../../domain/config.js';
import { baseChain, configAt, latestConfig, latestRevision, type RevisionChain } from '../../domain/config-revision.js';
import { chainSql, type RevisionRow, revisionsOf } from './sql/config-revisions.js';
import { storeStatementNames } from './sql/statement-names.js';

type Read = (
  query: { name: string; text: string; values: unknown[] },
  signal: AbortSignal,
) => Promise<{ rows: RevisionRow[] }>;

export class StoreChain {
  private chain: RevisionChain;

  constructor(base: NamespaceConfig) {
    this.chain = baseChain(base);
  }

  /** The newest revision known: what the next commit names. */
  get revision(): number {
    return latestRevision(this.chain);
  }

  /** The newest configuration known: what a warm-up or anything not at a position uses. */
  get latest(): NamespaceConfig {
    return latestConfig(this.chain);
  }

  configAt(partition: number, offset: number): NamespaceConfig {
    return configAt(this.chain, partition, offset);
  }

  /** Reads the chain again: a partition row showed a newer revision than the one known. */
  async read(read: Read, signal: AbortSignal): Promise<void> {
    const { namespace } = this.chain.base;
    const result = await read({ name: storeStatementNames.chain, text: chainSql, values: [namespace] }, signal);
    this.chain = { base: this.chain.base, revisions: revisionsOf(result.rows, this.chain.base) };
  }
}
