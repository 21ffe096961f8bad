/**
 * The oracle's own reading of which (item, location) is a stock key and on what terms
 * (docs/design.md#configuration, its version 2 rules), written apart
 * from the worker's src/domain/stock-key-terms.ts. It shares only Kafka's murmur2
 * (src/domain/murmur2.ts): a fixed published hash, not an interpretation of the spec.
 *
 * Listed keys are indexed once; a default-rule key's terms are computed when asked (the fast
 * oracle keeps them in its per-key state, which the verifier's memory bound already counts).
 */
import type { NamespaceConfig } from '../domain/config.js';
import { murmur2 } from '../domain/murmur2.js';
import { isName } from './oracle-decoder.js';
import { PairMap } from './pair-map.js';

export interface OracleKeyTerms {
  partition: number;
  opening: number;
  threshold: number;
}

const encoder = new TextEncoder();

export class OracleKeyRules {
  private readonly listed = new PairMap<OracleKeyTerms>();
  /** The default rule's opening and threshold; undefined without one. */
  private readonly fallback: { opening: number; threshold: number } | undefined;
  private readonly hashed: boolean;

  constructor(private readonly config: NamespaceConfig) {
    // Only murmur2 can place a key nobody listed, so only it carries a default rule.
    const murmur = config.schema_version === 2 && config.partitioner === 'murmur2' ? config : undefined;
    this.hashed = murmur !== undefined;
    this.fallback = murmur?.default_stock_key ?? undefined;
    for (const k of config.stock_keys) {
      const partition = 'partition' in k ? k.partition : this.kafkaPartition(k.item, k.location);
      this.listed.set(k.item, k.location, { partition, opening: k.opening, threshold: k.threshold });
    }
  }

  /** The terms of (item, location), or undefined when it is no stock key (UNKNOWN_KEY). */
  of(item: string, location: string): OracleKeyTerms | undefined {
    const listed = this.listed.get(item, location);
    if (listed !== undefined) return listed;
    if (this.fallback === undefined || !isName(item) || !isName(location)) return undefined;
    const { opening, threshold } = this.fallback;
    return { partition: this.kafkaPartition(item, location), opening, threshold };
  }

  /**
   * Kafka's default partitioner over the canonical key bytes. RFC 8785 of an object with
   * exactly the members item and location is this text: names in code-point order, strings
   * escaped as JSON.stringify escapes them.
   */
  private kafkaPartition(item: string, location: string): number {
    if (!this.hashed) throw new Error('verify: a listed key without a partition under a table');
    const text = `{"item":${JSON.stringify(item)},"location":${JSON.stringify(location)}}`;
    return (murmur2(encoder.encode(text)) & 0x7fffffff) % this.config.partitions;
  }
}
