#!/usr/bin/env node
// The main job until the fault-injection showcase lands (issue 6 replaces this with
// `amendsctl showcase`): on the local stack, create a fresh source topic, load the
// three fixture files of domain.md §7, and print what the worker will decide for them.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const runId = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').toLowerCase();
const namespace = `demo-${runId}`;
const topic = `amends-demo-${runId}`;
const dir = join(root, 'artifacts', 'demo', runId);
mkdirSync(dir, { recursive: true });
const env = {
  ...process.env,
  AMENDS_DATABASE_URL:
    process.env.AMENDS_DATABASE_URL ?? 'postgres://amends:amends-local-only@127.0.0.1:15432/amends?sslmode=disable',
};

function amendsctl(args, { capture = false } = {}) {
  process.stderr.write(`\n$ amendsctl ${args.join(' ')}\n`);
  const r = spawnSync(join(root, 'bin', 'amendsctl'), args, {
    env,
    stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    process.stderr.write(`demo: amendsctl ${args[0]} exited ${r.status}\n`);
    process.exit(1);
  }
  return r.stdout;
}

const manifestPath = join(dir, 'manifest.json');
const manifest = amendsctl(['source-create', '--namespace', namespace, '--topic', topic], { capture: true });
writeFileSync(manifestPath, manifest);
process.stdout.write(manifest);

const fixtures = ['before.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'].map((f) => join(root, 'fixtures', f));
const all = join(dir, 'fixtures.jsonl');
writeFileSync(all, fixtures.map((f) => readFileSync(f, 'utf8')).join(''));
amendsctl(['source-load', '--manifest', manifestPath, '--file', all]);
amendsctl(['simulate', '--manifest', manifestPath, '--file', all]);
process.stderr.write(`\ndemo: manifest and inputs kept in ${dir}\n`);
