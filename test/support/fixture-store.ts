/**
 * The fixtures' story written into a store as the worker writes it (store-history.ts): fixtures/two-keys.config.json, partition 0's
 * three stages of domain.md §7 (before, correction, cancel-last-day) as three batches, and
 * second-key.jsonl on partition 1 as one. Each batch is its own commit, so each stage has its own
 * decision time: what `explain --as-of-time` and `positions_at` tell apart.
 */
import { readFileSync } from 'node:fs';
import { type NamespaceConfig, parseConfigFile, parseNamespaceConfig } from '../../src/domain/config.js';
import { parseSimulationInput } from '../../src/domain/simulation-input.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import type { Database } from '../../src/io/store/postgres.js';
import { testName } from './endpoints.js';
import { fixturePath, twoKeysConfig } from './fixture-stories.js';
import { registerTestNamespace, writeHistory } from './store-history.js';
import { scratchFile } from './worker-process.js';

export const stageFiles = ['before.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'];

export interface FixtureStore {
  config: NamespaceConfig;
  manifestPath: string;
  /** Partition 0's stages: each one's last offset and its decision time (UTC text, microseconds). */
  stages: { last: number; decidedAt: string }[];
}

export async function writeFixtureStore(db: Database): Promise<FixtureStore> {
  const namespace = testName();
  const config = parseNamespaceConfig({
    namespace,
    partitions: 2,
    source_incarnation: `kafka:${'cd'.repeat(16)}`,
    ...parseConfigFile(JSON.parse(readFileSync(twoKeysConfig, 'utf8')), 2),
  });
  const manifest = await registerTestNamespace(db, config);
  const read = (file: string) => readFileSync(fixturePath(file), 'utf8');
  const records = (text: string): SourceRecord[] =>
    parseSimulationInput(text, config).map(({ partition, offset, key, value }) => ({ partition, offset, key, value }));
  const widget = records(stageFiles.map(read).join(''));
  const stages: FixtureStore['stages'] = [];
  let frontier = 0;
  for (const file of stageFiles) {
    const batch = widget.slice(frontier, frontier + records(read(file)).length);
    // One batch, one commit: the stage's own decision time.
    await writeHistory(db, config, batch, batch.length);
    frontier += batch.length;
    stages.push({ last: frontier - 1, decidedAt: await decidedAt(db, namespace, frontier - 1) });
    if (file === stageFiles[0]) await writeHistory(db, config, records(read('second-key.jsonl')), 100);
  }
  return { config, manifestPath: scratchFile(`${namespace}.manifest.json`, JSON.stringify(manifest)), stages };
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
