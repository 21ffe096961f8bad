/**
 * What the showcase loads into its source topic (docs/design.md#showcase): the fixtures'
 * stories and a generated filler on both stock keys, each stage written to
 * `<run dir>/<stage>.jsonl` and loaded with `amendsctl source-load`.
 *
 * Offsets are broker coordinates we can predict: fresh topics, one non-transactional
 * idempotent writer, every line in order. So a step can name the offset its fault lands on
 * before loading, and each load's printed offsets are checked against the prediction.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDays } from '../domain/calendar-day.js';
import type { Manifest } from '../domain/config.js';
import { fillerLines } from '../domain/filler-load.js';
import { stockKeyTerms } from '../domain/stock-key-terms.js';
import { packageRoot } from '../io/process/child-process.js';
import { operationalError } from '../kernel/amends-error.js';
import { amendsctlStdout } from './showcase-context.js';
import type { ShowcaseTimeline } from './showcase-timeline.js';

/** Filler records per stock key, per stage. */
export const fillerPerKey = { before: 400, afterCorrection: 400, stop: 1000, commitReply: 1000, relay: 400 } as const;
const firstFillerDay = '2026-03-10';

export interface FixtureRow {
  key: { item: string; location: string };
  value: Record<string, unknown>;
}

export interface SourcePosition {
  partition: number;
  offset: number;
}

/** The rows of fixtures/<file> (JSON lines). */
export function fixture(file: string): FixtureRow[] {
  return readFileSync(join(packageRoot, 'fixtures', file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as FixtureRow);
}

export class ShowcaseLoads {
  /** The next offset of each partition: what the fresh topic will give the next record. */
  private readonly nextOffsets = [0, 0];
  /** Filler days used so far: each stage's filler starts on days of its own. */
  private fillerDay = 0;

  constructor(
    private readonly manifest: Manifest,
    private readonly manifestPath: string,
    private readonly runDir: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly timeline: ShowcaseTimeline,
  ) {}

  partitionOf(row: FixtureRow): number {
    return stockKeyTerms(this.manifest.config, row.key.item, row.key.location)?.partition ?? -1;
  }

  /** The offset the next record loaded on `partition` will get. */
  nextOffset(partition: number): number {
    return this.nextOffsets[partition] as number;
  }

  /** How many of `rows` go to `partition`. */
  countOn(rows: readonly FixtureRow[], partition: number): number {
    return rows.filter((r) => this.partitionOf(r) === partition).length;
  }

  /** `perKey` filler records on each stock key, on days after the previous stage's. */
  filler(stage: string, perKey: number): FixtureRow[] {
    const firstDay = addDays(firstFillerDay, this.fillerDay);
    this.fillerDay += perKey;
    const perKeyLines = this.manifest.config.stock_keys.map((k) =>
      fillerLines({ item: k.item, location: k.location, stage, count: perKey, firstDay }),
    );
    // Interleaved, so both partitions are busy at once.
    return perKeyLines[0]?.flatMap((line, i) => [line, ...perKeyLines.slice(1).map((l) => l[i] as FixtureRow)]) ?? [];
  }

  /** Loads `rows` as stage `name`; fails unless the printed offsets are the predicted ones. */
  async load(name: string, rows: FixtureRow[]): Promise<SourcePosition[]> {
    const file = join(this.runDir, `${name}.jsonl`);
    writeFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const predicted = this.positionsOf(rows);
    const out = await amendsctlStdout(['source-load', '--manifest', this.manifestPath, '--file', file], this.env);
    const printed = [...out.matchAll(/^line (\d+) -> partition (\d+) offset (\d+)$/gm)].map((m) => ({
      partition: Number(m[2]),
      offset: Number(m[3]),
    }));
    const differs = predicted.findIndex(
      (p, i) => printed[i]?.partition !== p.partition || printed[i]?.offset !== p.offset,
    );
    if (printed.length !== predicted.length || differs >= 0) {
      throw operationalError(`source-load of ${name}: offsets differ from the fresh topic's (line ${differs + 1})`);
    }
    this.timeline.note(`loaded ${name}: ${rows.length} records`);
    return predicted;
  }

  /** Where `rows` will land, in order; advances the next offsets past them. */
  private positionsOf(rows: FixtureRow[]): SourcePosition[] {
    return rows.map((row) => {
      const partition = this.partitionOf(row);
      const offset = this.nextOffsets[partition] as number;
      this.nextOffsets[partition] = offset + 1;
      return { partition, offset };
    });
  }
}
