/**
 * Removing one namespace from the database (`amendsctl namespace-drop`, docs/operations.md,
 * "Removing a namespace"): every row of it in every amends table, in one transaction, or
 * nothing. Nothing else in amends deletes rows; this is the one way a namespace ends.
 *
 * It refuses while a process of the namespace is alive: a worker, relay or view whose last
 * heartbeat is fresh and not its final one (`stopped`, `failed`). Such a process would go on
 * writing into a namespace that no longer exists, or register it again from scratch. The
 * namespace's row is locked first (FOR UPDATE), so two drops do not interleave.
 *
 * The tables are listed here, children before the tables their foreign keys name; the suite
 * checks that every table with a namespace column is listed (a migration that adds one must
 * add it here too).
 */

import type pg from 'pg';
import { operationalError } from '../../kernel/amends-error.js';
import { int8ToSafeInteger } from '../../kernel/safe-integer.js';

/** Each table with rows of a namespace, and the column that says which (the name, or its id). */
export const namespaceTables: readonly { table: string; key: 'namespace' | 'ns' }[] = [
  { table: 'view_rows', key: 'ns' },
  { table: 'view_partitions', key: 'namespace' },
  { table: 'relay_partitions', key: 'namespace' },
  { table: 'output_bindings', key: 'namespace' },
  { table: 'output_days', key: 'ns' },
  { table: 'output_versions', key: 'ns' },
  { table: 'authority', key: 'ns' },
  { table: 'decisions', key: 'ns' },
  { table: 'config_revisions', key: 'namespace' },
  { table: 'worker_heartbeats', key: 'namespace' },
  { table: 'partitions', key: 'namespace' },
  { table: 'namespaces', key: 'namespace' },
];

/** A heartbeat younger than this, and not a final one, is a live process (beats come about once a second). */
export const liveHeartbeatMaxAgeS = 15;
/** A large namespace's rows may take longer to delete than the session's 5 s statement limit. */
const dropStatementTimeoutMs = 3_600_000;

export interface NamespaceRows {
  namespace: string;
  sourceTopic: string;
  sourceIncarnation: string;
  output: { topic: string; incarnation: string } | null;
  /** Rows per table, in `namespaceTables` order. */
  rows: { table: string; rows: number }[];
}

export interface LiveProcess {
  id: string;
  role: string;
  pid: number;
  ageS: number;
  state: string;
}

/**
 * In one transaction on `client`: locks the namespace's row, refuses while a process of it is
 * alive, counts (dry run) or deletes its rows, and commits only a drop. Undefined when the
 * namespace is not registered.
 */
export async function dropNamespaceRows(
  client: pg.ClientBase,
  namespace: string,
  options: { drop: boolean; withSourceTopic: boolean },
): Promise<NamespaceRows | undefined> {
  const { drop } = options;
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL statement_timeout = ${dropStatementTimeoutMs}`);
    const found = await client.query<{ id: number; source_topic: string; source_incarnation: string }>(
      'SELECT id, source_topic, source_incarnation FROM namespaces WHERE namespace = $1 FOR UPDATE',
      [namespace],
    );
    const row = found.rows[0];
    if (row === undefined) {
      await client.query('ROLLBACK');
      return undefined;
    }
    const live = await liveProcesses(client, namespace);
    if (live.length > 0) throw operationalError(refusal(namespace, live));
    if (options.withSourceTopic) await refuseSharedSource(client, namespace, row.source_incarnation, row.source_topic);
    const binding = await client.query<{ output_topic: string; incarnation: string }>(
      'SELECT output_topic, incarnation FROM output_bindings WHERE namespace = $1',
      [namespace],
    );
    const rows: NamespaceRows['rows'] = [];
    for (const { table, key } of namespaceTables) {
      const value = key === 'ns' ? row.id : namespace;
      rows.push({
        table,
        rows: drop ? await deleted(client, table, key, value) : await counted(client, table, key, value),
      });
    }
    await client.query(drop ? 'COMMIT' : 'ROLLBACK');
    const bound = binding.rows[0];
    return {
      namespace,
      sourceTopic: row.source_topic,
      sourceIncarnation: row.source_incarnation,
      output: bound === undefined ? null : { topic: bound.output_topic, incarnation: bound.incarnation },
      rows,
    };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

async function counted(client: pg.ClientBase, table: string, key: string, value: unknown): Promise<number> {
  const r = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${key} = $1`, [value]);
  return int8ToSafeInteger(r.rows[0]?.n ?? '0', `${table} rows`);
}

async function deleted(client: pg.ClientBase, table: string, key: string, value: unknown): Promise<number> {
  const r = await client.query(`DELETE FROM ${table} WHERE ${key} = $1`, [value]);
  return r.rowCount ?? 0;
}

/** The namespace's processes whose last heartbeat is fresh and not final. */
async function liveProcesses(client: pg.ClientBase, namespace: string): Promise<LiveProcess[]> {
  const r = await client.query<{ worker_id: string; role: string; pid: number; age_s: string; state: string }>(
    `SELECT worker_id, role, pid, state_text AS state,
            round(extract(epoch FROM clock_timestamp() - heartbeat_at)::numeric, 1)::text AS age_s
       FROM (SELECT *, coalesce(state->>'group', state->>'state', '?') AS state_text FROM worker_heartbeats
              WHERE namespace = $1) h
      WHERE heartbeat_at > clock_timestamp() - make_interval(secs => $2)
        AND state_text NOT IN ('stopped', 'failed')
      ORDER BY role, worker_id`,
    [namespace, liveHeartbeatMaxAgeS],
  );
  return r.rows.map((p) => ({ id: p.worker_id, role: p.role, pid: p.pid, ageS: Number(p.age_s), state: p.state }));
}

/** Another namespace over the same source (a rebuild) would lose its history with the topic. */
async function refuseSharedSource(
  client: pg.ClientBase,
  namespace: string,
  incarnation: string,
  topic: string,
): Promise<void> {
  const others = await client.query<{ namespace: string }>(
    'SELECT namespace FROM namespaces WHERE source_incarnation = $1 AND namespace <> $2 ORDER BY namespace',
    [incarnation, namespace],
  );
  if (others.rows.length === 0) return;
  const names = others.rows.map((r) => r.namespace).join(', ');
  throw operationalError(
    `source topic ${topic} is read by namespace ${names} as well: nothing was dropped; drop without --topics (the topic stays), or drop ${names} first`,
  );
}

function refusal(namespace: string, live: readonly LiveProcess[]): string {
  const named = live
    .map((p) => `${p.role} ${p.id} (pid ${p.pid}, ${p.state}, last heartbeat ${p.ageS} s ago)`)
    .join(', ');
  return `namespace ${namespace} still has live processes: ${named}; nothing was dropped: stop them first (SIGTERM); a process that was killed counts as gone ${liveHeartbeatMaxAgeS} s after its last heartbeat`;
}
