/**
 * Shared fixtures of the configuration revision tests (config-revision.test.ts,
 * revision-rules.test.ts): a version 2 namespace under murmur2 and under the table, a chain of
 * two revisions over the first, and a way to read a refusal.
 */
import {
  type ConfigFile,
  type Murmur2ConfigV2,
  type NamespaceConfig,
  parseNamespaceConfig,
  type TableConfigV2,
} from '../../src/domain/config.js';
import { baseChain, nextRevision, type RevisionChain } from '../../src/domain/config-revision.js';
import { anyKeyConfig } from './ledger-test-kit.js';

/** ledger-test-kit.ts's any-key namespace on two partitions: widget@berlin listed, a default rule. */
export const murmurBase = parseNamespaceConfig({ ...anyKeyConfig, partitions: 2 }) as Murmur2ConfigV2;

/** The same namespace under the table partitioner: widget@berlin on 0, gadget@paris on 1. */
export const tableBase = parseNamespaceConfig({
  ...murmurBase,
  partitioner: 'table',
  default_stock_key: null,
  stock_keys: [
    { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
    { item: 'gadget', location: 'paris', partition: 1, opening: 0, threshold: 5 },
  ],
}) as TableConfigV2;

/** The chain over `base` with a revision per step, each made as config-revise makes it. */
export function chainOf(base: NamespaceConfig, ...steps: [from: number[], config: NamespaceConfig][]): RevisionChain {
  let chain = baseChain(base);
  for (const [from, config] of steps) {
    chain = { base, revisions: [...chain.revisions, nextRevision(chain, from, config)] };
  }
  return chain;
}

/** The one-line refusal `run` throws. */
export function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('accepted');
}

// Revision 2 changes the default rule; revision 3 adds an override. On partition 1 both start at
// the same offset, so revision 2 is in force nowhere there.
export const rev2From = [3, 5];
export const rev3From = [6, 5];
export const rev2Config: Murmur2ConfigV2 = { ...murmurBase, default_stock_key: { opening: 10, threshold: 1 } };
export const rev3Config: Murmur2ConfigV2 = {
  ...rev2Config,
  stock_keys: [...rev2Config.stock_keys, { item: 'gadget', location: 'paris', opening: 7, threshold: 3 }],
};
export const chain = chainOf(murmurBase, [rev2From, rev2Config], [rev3From, rev3Config]);

/** The config file of `config`: what an operator passes to config-revise. */
export function fileOf(config: NamespaceConfig): ConfigFile {
  const { namespace: _n, partitions: _p, source_incarnation: _s, ...file } = config;
  return file as ConfigFile;
}
