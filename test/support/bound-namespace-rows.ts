/**
 * A namespace registered straight in a test's own schema, with an output binding and its relay
 * cursors, for the tests that explain the store's reads (the relay's, the verifier's) on rows
 * written by SQL rather than by a worker.
 */
import type pg from 'pg';
import type { Manifest } from '../../src/domain/config.js';
import { namespaceId, registerNamespace } from '../../src/io/store/namespace-registry.js';
import type { Queryable } from '../../src/io/store/postgres.js';

/** A one-key, two-partition manifest of `namespace`. */
export function manifestFor(namespace: string, origin = '2026-03-01'): Manifest {
  return {
    source_topic: `${namespace}-topic`,
    config: {
      namespace,
      schema_version: 1,
      ledger_origin: origin,
      partitions: 2,
      stock_keys: [{ item: 'widget', location: 'berlin', partition: 0, opening: 100, threshold: 20 }],
      source_incarnation: `kafka:${'ab'.repeat(16)}`,
    },
  };
}

/** Registers `namespace`, binds it to a 2-partition output topic with both relay cursors at 0; returns its id. */
export async function registerBoundNamespace(db: Queryable, namespace: string, origin?: string): Promise<number> {
  await registerNamespace(db, manifestFor(namespace, origin));
  await db.query(
    `WITH b AS (INSERT INTO output_bindings (namespace, output_topic, incarnation, partitions)
                VALUES ($1, $1 || '-out', 'kafka:' || md5($1), 2) RETURNING namespace)
     INSERT INTO relay_partitions (namespace, partition) SELECT namespace, g FROM b, generate_series(0, 1) g`,
    [namespace],
  );
  return namespaceId(db, namespace);
}

/**
 * Test setup, not a statement of amends: one transaction of SQL statements without the 5 s
 * statement timeout every amends session carries (a large fill took longer on a loaded machine).
 */
export async function fillUnbounded(pool: pg.Pool, statements: [sql: string, params: unknown[]][]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL statement_timeout = 0');
    for (const [sql, params] of statements) await client.query(sql, params);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
