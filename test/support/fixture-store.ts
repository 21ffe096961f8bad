/**
 * The fixtures' story written into a store as the worker writes it (PostgresState, the store seam
 * the worker's machines call), without a broker: fixtures/two-keys.config.json, partition 0's
 * three stages of domain.md §7 (before, correction, cancel-last-day) as three batches, and
 * second-key.jsonl on partition 1 as one. Each batch is its own commit, so each stage has its own
 * decision time: what `explain --as-of-time` and `positions_at` tell apart.
 */
import { readFileSync } from 'node:fs';
import { type Manifest, type NamespaceConfig, parseConfigFile, parseNamespaceConfig } from '../../src/domain/config.js';
import { parseSimulationInput } from '../../src/domain/simulation-input.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { registerNamespace } from '../../src/io/store/namespace-registry.js';
import type { Database } from '../../src/io/store/postgres.js';
import { PostgresState } from '../../src/io/store/postgres-state.js';
import { testName } from './endpoints.js';
import { fixturePath, twoKeysConfig } from './fixture-stories.js';
import { scratchFile } from './worker-process.js';

export const stageFiles = ['before.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'];

export interface FixtureStore {
  config: NamespaceConfig;
  manifestPath: string;
  /** Partition 0's stages: each one's last offset and its decision time (UTC text, microseconds). */
  stages: { last: number; decidedAt: string }[];
}

const never = new AbortController().signal;

export async function writeFixtureStore(db: Database): Promise<FixtureStore> {
  const namespace = testName();
  const config = parseNamespaceConfig({
    namespace,
    partitions: 2,
    source_incarnation: `kafka:${'cd'.repeat(16)}`,
    ...parseConfigFile(JSON.parse(readFileSync(twoKeysConfig, 'utf8')), 2),
  });
  const manifest: Manifest = { source_topic: `${namespace}-topic`, config };
  await registerNamespace(db.pool, manifest);
  const read = (file: string) => readFileSync(fixturePath(file), 'utf8');
  const records = (text: string): SourceRecord[] =>
    parseSimulationInput(text, config).map(({ partition, offset, key, value }) => ({ partition, offset, key, value }));
  const widget = records(stageFiles.map(read).join(''));
  const store = new PostgresState(db, config, { workerId: `fixture-store-${namespace}` });
  const stages: FixtureStore['stages'] = [];
  try {
    const p0 = await store.claim(0, never);
    const p1 = await store.claim(1, never);
    let frontier = 0;
    for (const file of stageFiles) {
      const batch = widget.slice(frontier, frontier + records(read(file)).length);
      await commit(store, batch, p0.epoch, frontier);
      frontier += batch.length;
      stages.push({ last: frontier - 1, decidedAt: await decidedAt(db, namespace, frontier - 1) });
      if (file === stageFiles[0]) await commit(store, records(read('second-key.jsonl')), p1.epoch, 0);
    }
  } finally {
    await store.close();
  }
  return { config, manifestPath: scratchFile(`${namespace}.manifest.json`, JSON.stringify(manifest)), stages };
}

async function commit(store: PostgresState, records: SourceRecord[], epoch: number, frontier: number) {
  const partition = (records[0] as SourceRecord).partition;
  const outcome = await store.process({ partition, records, epoch, expectedFrontier: frontier }, never);
  if (outcome.kind !== 'acknowledged')
    throw new Error(`the fixture batch at ${partition}:${frontier}: ${outcome.kind}`);
}

async function decidedAt(db: Database, namespace: string, offset: number): Promise<string> {
  const result = await db.pool.query<{ at: string }>(
    `SELECT to_char(d.decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at
       FROM decisions d JOIN namespaces n ON n.id = d.ns
      WHERE n.namespace = $1 AND d.partition = 0 AND d.record_offset = $2`,
    [namespace, offset],
  );
  return result.rows[0]?.at as string;
}
