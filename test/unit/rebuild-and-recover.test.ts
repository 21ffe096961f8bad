/**
 * The pure parts of rebuild-create and manifest-recover: the manifest's printed layout, the
 * rebuild manifest, and the checks on a registry row (the commands themselves run against
 * the real stack in test/integration/rebuild-and-recover.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { configDigest, type Manifest } from '../../src/domain/config.js';
import { baseChain, nextRevision } from '../../src/domain/config-revision.js';
import { manifestText } from '../../src/domain/manifest-text.js';
import { rebuildManifest } from '../../src/domain/rebuild-manifest.js';
import { manifestFromStored, type StoredNamespace } from '../../src/domain/recovered-manifest.js';
import { AmendsError } from '../../src/kernel/amends-error.js';

const manifest: Manifest = {
  source_topic: 'ledger-1',
  config: {
    namespace: 'ns-1',
    schema_version: 1,
    ledger_origin: '2026-03-01',
    partitions: 2,
    stock_keys: [
      { item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 },
      { item: 'gadget', location: 'paris', partition: 1, opening: -5, threshold: 10 },
    ],
    source_incarnation: 'kafka:0123456789abcdef0123456789abcdef',
  },
};

/** The members the way PostgreSQL's jsonb returns them: shorter names first, then bytewise. */
function jsonbOrdered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrdered);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value).sort(([a], [b]) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, jsonbOrdered(v)]));
}

function errorOf(run: () => unknown): AmendsError {
  try {
    run();
  } catch (error) {
    if (error instanceof AmendsError) return error;
    throw error;
  }
  throw new Error('expected an AmendsError');
}

function stored(overrides: Partial<StoredNamespace> = {}): StoredNamespace {
  return {
    namespace: manifest.config.namespace,
    sourceTopic: manifest.source_topic,
    sourceIncarnation: manifest.config.source_incarnation,
    config: jsonbOrdered(manifest.config),
    configDigest: configDigest(manifest.config),
    ...overrides,
  };
}

describe('manifestText', () => {
  it("prints domain.md §1's member order whatever order the object has", () => {
    const reordered = jsonbOrdered(manifest) as Manifest;
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(manifest));
    expect(manifestText(reordered)).toBe(manifestText(manifest));
    expect(manifestText(manifest)).toBe(`${JSON.stringify(manifest, null, 2)}\n`);
  });
});

describe('rebuildManifest', () => {
  it('keeps source, incarnation and configuration; only the namespace changes', () => {
    const rebuilt = rebuildManifest(manifest, 'ns-1-rebuild');
    expect(rebuilt).toEqual({ ...manifest, config: { ...manifest.config, namespace: 'ns-1-rebuild' } });
    expect(manifest.config.namespace).toBe('ns-1');
  });

  it('takes the newest revision the manifest carries as its configuration, from offset 0', () => {
    const newest = {
      ...manifest.config,
      stock_keys: [...manifest.config.stock_keys].reverse(),
    } as typeof manifest.config;
    const revised = { ...manifest, revisions: [nextRevision(baseChain(manifest.config), [3, 4], newest)] };
    const rebuilt = rebuildManifest(revised, 'ns-1-rebuild');
    expect(rebuilt).toEqual({ ...manifest, config: { ...newest, namespace: 'ns-1-rebuild' } });
    expect(manifestText(revised)).toContain('"revisions"');
    expect(manifestText(rebuilt)).not.toContain('"revisions"');
  });

  it("refuses the manifest's own namespace as a usage error", () => {
    const error = errorOf(() => rebuildManifest(manifest, 'ns-1'));
    expect(error.code).toBe('usage');
    expect(error.message).toContain("manifest's own namespace");
  });
});

describe('manifestFromStored', () => {
  it('rebuilds the manifest from a jsonb-ordered row, printing byte for byte the original', () => {
    const recovered = manifestFromStored(stored());
    expect(manifestText(recovered)).toBe(manifestText(manifest));
  });

  it('refuses a stored config whose digest is not the stored digest', () => {
    const altered = { ...manifest.config, ledger_origin: '2026-03-02' };
    const error = errorOf(() => manifestFromStored(stored({ config: altered })));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain(`stored config_digest is ${configDigest(manifest.config)}`);
  });

  it('refuses a row whose config names another namespace or incarnation', () => {
    const other = { ...manifest.config, namespace: 'ns-2' };
    expect(
      errorOf(() => manifestFromStored(stored({ config: other, configDigest: configDigest(other) }))).message,
    ).toContain('names namespace ns-2');
    expect(
      errorOf(() => manifestFromStored(stored({ sourceIncarnation: 'kafka:ffffffffffffffffffffffffffffffff' })))
        .message,
    ).toContain('source_incarnation column kafka:ffff');
  });

  it('refuses a stored config that is not a valid configuration', () => {
    const error = errorOf(() => manifestFromStored(stored({ config: { ...manifest.config, partitions: 0 } })));
    expect(error.message).toMatch(/^namespace ns-1 in the database: config: partitions must be within/);
  });
});
