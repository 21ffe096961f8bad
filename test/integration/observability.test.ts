/**
 * Observability of the long-running processes (issue 16), scraped as Prometheus and an
 * operator's tools would: `/metrics` parsed and held against `inspect --json`, `/readyz`
 * 503 before a worker works and 200 once it does, and the consumer group's offsets read
 * with Kafka's own kafka-consumer-groups (ConsumerGroupCommand through `stack.sh tool`):
 * equal to the frontiers with lag 0 after a drain, and a group offset set ahead of the
 * frontier does not move where a restarted worker resumes (PostgreSQL wins).
 */

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/amendsctl-process.js';
import { testBrokers } from '../support/endpoints.js';
import { fixturePath, twoKeysConfig } from '../support/fixture-stories.js';
import {
  type AmendsProcess,
  amendsctl,
  type BoundSource,
  createBoundSource,
  loadText,
  startAmends,
  transportSuite,
} from '../support/transport-process.js';

const run = promisify(execFile);
const { topics, probe } = transportSuite();
const story = () =>
  readFileSync(fixturePath('before.jsonl'), 'utf8') + readFileSync(fixturePath('second-key.jsonl'), 'utf8');

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format: `name{a="x",b="y"} value` per sample line. */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1] as string] = l[2] as string;
    }
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return samples;
}

async function endpoint(p: AmendsProcess): Promise<string> {
  const line = await p.waitForLog('metrics_listening');
  return `http://${line.address as string}`;
}

async function readyz(base: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${base}/readyz`);
  return { status: response.status, body: await response.text() };
}

async function scrape(base: string): Promise<Sample[]> {
  const response = await fetch(`${base}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await response.text());
}

function sum(samples: Sample[], name: string, where: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}

interface Inspection {
  counts: Record<string, number>;
  partitions: { partition: number; frontier: number }[];
  outbox: { pending: number; published: number };
  view: { partitions: { partition: number; frontier: number }[] };
}

async function inspect(source: BoundSource): Promise<Inspection> {
  return JSON.parse(await amendsctl(['inspect', '--manifest', source.manifestPath, '--json'])) as Inspection;
}

/** Kafka's kafka-consumer-groups (ConsumerGroupCommand) with the stack's jars. */
async function groupTool(args: string[]): Promise<string> {
  const tool = 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand';
  const script = join(repoRoot, 'scripts/stack.sh');
  const { stdout } = await run('bash', [script, 'tool', tool, '--bootstrap-server', testBrokers, ...args], {
    timeout: 60_000,
  });
  return stdout;
}

/** kafka-consumer-groups --describe: partition → [current offset, lag] (null for "-"). */
async function groupOffsets(group: string): Promise<Map<number, [number | null, number | null]>> {
  const offsets = new Map<number, [number | null, number | null]>();
  for (const line of (await groupTool(['--describe', '--group', group])).split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] !== group) continue;
    const n = (s: string | undefined) => (s === undefined || s === '-' ? null : Number(s));
    offsets.set(Number(f[2]), [n(f[3]), n(f[5])]);
  }
  return offsets;
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, budgetMs = 30_000): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`${what}: last seen ${JSON.stringify(v, (_, x) => (x instanceof Map ? [...x] : x))}`);
    await sleep(250);
  }
}

describe('metrics, health and readiness', () => {
  it('/readyz is 503 for a worker that is not working yet, /healthz 200', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    // No broker answers here: the worker can never join its group (it gives up with exit 1).
    const stuck = startAmends('worker', source.manifestPath, [
      '--metrics-addr',
      '127.0.0.1:0',
      '--brokers',
      '127.0.0.1:9',
    ]);
    const base = await endpoint(stuck);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toMatch(/^starting: not yet a member of the consumer group\n$/);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/nothing`)).status).toBe(404);
  });

  it('worker, relay and view metrics equal inspect --json after a drain; /readyz 200 once working', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    const records = await loadText(source, 'story', story());
    const args = ['--metrics-addr', '127.0.0.1:0'];
    const [worker, relay, view] = (['worker', 'relay', 'view'] as const).map((r) =>
      startAmends(r, source.manifestPath, args),
    );
    const [w, r, v] = await Promise.all([worker, relay, view].map((p) => endpoint(p as AmendsProcess)));
    await probe.waitDecided(source.namespace, records);
    // The output topic's ends once the relay has published everything: read earlier, they can
    // miss a partition still to come, and the view then never "reaches" them.
    await probe.waitPublished(source.namespace, (await probe.outbox(source.namespace)).total);
    await probe.waitViewCaughtUp(source);
    for (const base of [w, r, v]) {
      const ready = await until(
        `${base}/readyz`,
        () => readyz(base as string),
        (x) => x.status === 200,
      );
      expect(ready.body).toMatch(/^active: /);
    }
    const seen = await inspect(source);
    const ns = { namespace: source.namespace };

    const ws = await scrape(w as string);
    for (const [outcome, n] of Object.entries(seen.counts)) {
      expect(sum(ws, 'amends_records_decided_total', { ...ns, outcome }), outcome).toBe(n);
    }
    expect(sum(ws, 'amends_records_decided_total', ns)).toBe(records);
    for (const p of seen.partitions) {
      expect(sum(ws, 'amends_partition_frontier', { ...ns, partition: String(p.partition) })).toBe(p.frontier);
      expect(sum(ws, 'amends_partition_lag', { ...ns, partition: String(p.partition) })).toBe(0);
    }
    const attempts = sum(ws, 'amends_commit_attempts_total', { ...ns, observation: 'acknowledged' });
    expect(attempts).toBeGreaterThan(0);
    expect(sum(ws, 'amends_batch_commit_duration_seconds_count', ns)).toBe(attempts);
    expect(sum(ws, 'amends_partition_claims_total', { ...ns, result: 'claimed' })).toBe(2);

    const rs = await scrape(r as string);
    expect(sum(rs, 'amends_outbox_pending', ns)).toBe(seen.outbox.pending);
    expect(sum(rs, 'amends_relay_published_total', ns)).toBe(seen.outbox.published);
    expect(sum(rs, 'amends_relay_active', ns)).toBe(1);

    const vs = await scrape(v as string);
    const viewed = seen.view.partitions.reduce((a, p) => a + p.frontier, 0);
    expect(sum(vs, 'amends_view_records_total', ns)).toBe(viewed);
    expect(sum(vs, 'amends_view_records_total', { ...ns, result: 'applied' })).toBe(seen.outbox.published);
  });
});

describe('readiness: one rule for every role', () => {
  it('a hot standby is ready and says standby, the active process says active: worker, relay and view', async () => {
    // One partition: of two workers in the group, one owns it and the other has none.
    const source = await createBoundSource(topics, fixturePath('default.config.json'), 1);
    const args = ['--metrics-addr', '127.0.0.1:0'];
    const first = new Map<string, AmendsProcess>();
    for (const role of ['relay', 'view'] as const) {
      first.set(role, startAmends(role, source.manifestPath, args));
      await first.get(role)?.waitForLog(`${role}_active`);
    }
    const second = new Map(
      (['relay', 'view'] as const).map((role) => [role, startAmends(role, source.manifestPath, args)]),
    );
    for (const [role, p] of second) await p.waitForLog(`${role}_standby`);
    const workers = [
      startAmends('worker', source.manifestPath, args),
      startAmends('worker', source.manifestPath, args),
    ];
    const bases = new Map<AmendsProcess, string>();
    for (const p of [...first.values(), ...second.values(), ...workers]) bases.set(p, await endpoint(p));
    const answer = (p: AmendsProcess) => readyz(bases.get(p) as string);

    for (const [role, p] of first) {
      const got = await answer(p);
      expect([got.status, got.body], role).toEqual([200, expect.stringMatching(/^active: /)]);
    }
    for (const [role, p] of second) {
      const got = await answer(p);
      expect([got.status, got.body], role).toEqual([200, expect.stringMatching(/^standby: waiting for the \w+ lock/)]);
    }
    // The workers: once both are members (both 200), one active and one standby.
    const states = await until(
      'both workers ready',
      () => Promise.all(workers.map(answer)),
      (all) => all.every((x) => x.status === 200) && new Set(all.map((x) => x.body.split(':')[0])).size === 2,
    );
    expect(states.map((x) => x.body.split(':')[0]).sort()).toEqual(['active', 'standby']);

    // The active relay and view stop: each standby takes over and says active.
    await Promise.all([...first.values()].map((p) => p.stop('SIGTERM')));
    for (const [role, p] of second) {
      const got = await until(
        `${role} takes over`,
        () => answer(p),
        (x) => x.body.startsWith('active: '),
      );
      expect(got.status, role).toBe(200);
    }
  });
});

describe('consumer group offsets (kafka-consumer-groups)', () => {
  it('equal the frontiers with lag 0 after a drain, empty partitions too; an offset ahead of the frontier does not move the resume point', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    const group = `amends.${source.namespace}.source`;
    // Partition 0 only: partition 1 stays empty, its frontier 0 (committed as claimed).
    const first = await loadText(source, 'first', readFileSync(fixturePath('before.jsonl'), 'utf8'));
    const worker = startAmends('worker', source.manifestPath);
    await probe.waitDecided(source.namespace, first);
    const frontiers = new Map((await inspect(source)).partitions.map((p) => [p.partition, p.frontier]));
    expect(frontiers.get(1)).toBe(0);
    const drained = await until(
      'group offsets equal the frontiers',
      () => groupOffsets(group),
      (g) => [...frontiers].every(([p, f]) => g.get(p)?.[0] === f && g.get(p)?.[1] === 0),
    );
    expect([...drained].sort()).toEqual([...frontiers].sort().map(([p, f]) => [p, [f, 0]]));
    expect((await worker.stop()).code).toBe(0);

    // More records while no worker runs; then the group is told they were all consumed.
    const second = await loadText(source, 'second', readFileSync(fixturePath('second-key.jsonl'), 'utf8'));
    await groupTool(['--reset-offsets', '--group', group, '--topic', source.topic, '--to-latest', '--execute']);
    const ahead = (await groupOffsets(group)).get(1)?.[0];
    expect(ahead).toBe((frontiers.get(1) ?? 0) + second);

    startAmends('worker', source.manifestPath);
    // PostgreSQL's frontier wins: the records behind the group's offset are decided all the same.
    await probe.waitDecided(source.namespace, first + second);
    const after = (await inspect(source)).partitions.find((p) => p.partition === 1);
    expect(after?.frontier).toBe((frontiers.get(1) ?? 0) + second);
  });
});
