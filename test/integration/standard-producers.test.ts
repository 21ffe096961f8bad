/**
 * A team's own producer writes the source topic (issue 32; docs/operations.md, "Writing to the
 * source topic from your own producers"): Kafka's Java console producer, with its default
 * partitioner (murmur2 over the key bytes, as every Java producer has it), writes canonical
 * keys of 20 items at 3 locations that the configuration never lists
 * (fixtures/any-key.config.json: murmur2 and a default rule). A worker, relay and view carry
 * them; no record may be UNKNOWN_KEY or ROUTING, every partition gets records, and
 * `amendsctl verify` says PASS. The reference for "where Kafka puts a key" is Kafka itself.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runAmendsctl } from '../support/amendsctl-process.js';
import { testBrokers } from '../support/endpoints.js';
import { fixturePath } from '../support/fixture-stories.js';
import { endOffsets } from '../support/kafka-test-tools.js';
import {
  amendsctl,
  type BoundSource,
  createBoundSource,
  startAmends,
  stopAllAmends,
  transportEnv,
  transportSuite,
} from '../support/transport-process.js';

const { topics, probe } = transportSuite();
const partitions = 3;
const producerBudgetMs = 30_000;

const items = Array.from({ length: 20 }, (_, i) => `item-${String(i + 1).padStart(2, '0')}`);
const locations = ['berlin', 'paris', 'wien'];

/**
 * `key|value` lines: per key a post on two days and a correction of the first, so every key
 * has versions, amendments and authority. The key is the canonical JSON (members sorted, no
 * spaces), as a producer must write it for Kafka's partitioner to agree with amends.
 */
function producerLines(): string[] {
  return items.flatMap((item) =>
    locations.flatMap((location) => {
      const key = JSON.stringify({ item, location });
      const post = (txn: string, rev: number, day: string, qty: number) =>
        `${key}|${JSON.stringify({ schema: 1, txn, rev, op: 'post', item, location, day, qty })}`;
      return [post('T1', 1, '2026-03-02', 7), post('T2', 1, '2026-03-03', -3), post('T1', 2, '2026-03-02', 4)];
    }),
  );
}

/** Kafka's own kafka-console-producer (through `stack.sh tool`, the stack's jars): default partitioner, acks=all. */
function consoleProduce(topic: string, lines: string[]): Promise<void> {
  const args = [
    join(repoRoot, 'scripts/stack.sh'),
    'tool',
    'org.apache.kafka.tools.ConsoleProducer',
    '--bootstrap-server',
    testBrokers,
    '--topic',
    topic,
    '--property',
    'parse.key=true',
    '--property',
    'key.separator=|',
    // A missing topic must fail fast, not wait a minute for metadata.
    '--producer-property',
    'max.block.ms=10000',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('bash', args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), producerBudgetMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`kafka-console-producer exited ${code}: ${stderr.slice(-2000)}`));
    });
    child.stdin.end(`${lines.join('\n')}\n`);
  });
}

/** Outcome → count, from `amendsctl export --what decisions`. */
async function outcomes(source: BoundSource): Promise<Record<string, number>> {
  const text = await amendsctl(['export', '--manifest', source.manifestPath, '--what', 'decisions']);
  const counts: Record<string, number> = {};
  for (const line of text.split('\n').filter((l) => l !== '')) {
    const { outcome } = JSON.parse(line) as { outcome: string };
    counts[outcome] = (counts[outcome] ?? 0) + 1;
  }
  return counts;
}

describe("a source written by Kafka's Java console producer", () => {
  it('decides keys never listed on the partitions Kafka chose: no UNKNOWN_KEY, no ROUTING, verify PASS', async () => {
    const source = await createBoundSource(topics, fixturePath('any-key.config.json'), partitions);
    const lines = producerLines();
    await consoleProduce(source.topic, lines);
    const ends = await endOffsets(source.topic, partitions);
    expect(ends.reduce((a, b) => a + b, 0)).toBe(lines.length);
    // Kafka spread the 60 keys over every partition: the test is not one partition's.
    expect(
      ends.every((end) => end > 0),
      JSON.stringify(ends),
    ).toBe(true);

    startAmends('worker', source.manifestPath);
    startAmends('relay', source.manifestPath);
    startAmends('view', source.manifestPath);
    await probe.waitDecided(source.namespace, lines.length);
    await probe.until(
      `outbox of ${source.namespace} published`,
      () => probe.outbox(source.namespace),
      (o) => o.total > 0 && o.pending === 0,
    );
    await probe.waitViewCaughtUp(source);
    await stopAllAmends();

    // Per key: T1 applied, T2 applied, T1's correction applied.
    expect(await outcomes(source)).toEqual({ APPLIED: lines.length });
    const verify = await runAmendsctl(['verify', '--manifest', source.manifestPath, '--json'], { ...transportEnv });
    const report = JSON.parse(verify.stdout) as { verdict: string; counts: Record<string, number> };
    expect([verify.code, report.verdict], verify.stdout + verify.stderr).toEqual([0, 'PASS']);
    expect(report.counts).toMatchObject({ records: lines.length, decisions: lines.length, quarantine: 0 });
  });
});
