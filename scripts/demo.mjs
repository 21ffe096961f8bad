#!/usr/bin/env node
// The main job until the fault-injection showcase lands (issue 6 replaces it with
// `amendsctl showcase`). On the local stack: create a fresh two-key source topic and its
// output topic, start two workers, a relay and a view, load the fixture stories of domain.md
// §7 and fixtures/second-key.jsonl, wait until everything is decided, relayed and viewed,
// and show that what the workers committed equals, byte for byte, what `simulate` derives
// offline from the same records, and that the view holds the latest version of every day.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const runId = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').toLowerCase();
const namespace = `demo-${runId}`;
const topic = `amends-demo-${runId}`;
const dir = join(root, 'artifacts', 'demo', runId);
const catchUpTimeoutMs = 60_000;
mkdirSync(dir, { recursive: true });
const env = {
  ...process.env,
  AMENDS_DATABASE_URL:
    process.env.AMENDS_DATABASE_URL ?? 'postgres://amends:amends-local-only@127.0.0.1:15432/amends?sslmode=disable',
};
const say = (s) => process.stderr.write(`${s}\n`);

function amendsctl(args, { quiet = false } = {}) {
  if (!quiet) say(`\n$ amendsctl ${args.join(' ')}`);
  const r = spawnSync(join(root, 'bin', 'amendsctl'), args, {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`amendsctl ${args[0]} exited ${r.status}`);
  return r.stdout;
}

const workers = [];
function startProcess(role, name) {
  say(`$ amends ${role} --manifest ${manifestPath} --instance-id ${name}   (logs: ${name}.log)`);
  const log = join(dir, `${name}.log`);
  const child = spawn(join(root, 'bin', 'amends'), [role, '--manifest', manifestPath, '--instance-id', name], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const chunks = [];
  child.stderr.on('data', (c) => chunks.push(c));
  child.on('exit', () => writeFileSync(log, Buffer.concat(chunks)));
  workers.push(child);
}

function stopWorkers() {
  return Promise.all(
    workers.map(
      (w) =>
        new Promise((resolve) => {
          if (w.exitCode !== null) return resolve();
          w.once('exit', resolve);
          w.kill('SIGTERM');
        }),
    ),
  );
}

async function waitCaughtUp() {
  const deadline = Date.now() + catchUpTimeoutMs;
  for (;;) {
    const doc = JSON.parse(amendsctl(['inspect', '--manifest', manifestPath, '--json'], { quiet: true }));
    const decided = doc.partitions.every((p) => p.lag === 0);
    const relayed = doc.outbox.pending === 0;
    const viewed = doc.view?.partitions.every((p) => p.lag === 0) === true;
    if (decided && relayed && viewed) return doc;
    if (Date.now() > deadline) throw new Error(`workers did not catch up within ${catchUpTimeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

const manifestPath = join(dir, 'manifest.json');
let exitCode = 0;
process.on('SIGINT', () => stopWorkers().then(() => process.exit(130)));
try {
  const manifest = amendsctl([
    'source-create',
    '--namespace',
    namespace,
    '--topic',
    topic,
    '--config',
    join(root, 'fixtures', 'two-keys.config.json'),
  ]);
  writeFileSync(manifestPath, manifest);
  process.stdout.write(manifest);
  say('');
  amendsctl(['output-create', '--manifest', manifestPath, '--topic', `${topic}-out`]);
  say('');
  startProcess('worker', 'worker-a');
  startProcess('worker', 'worker-b');
  startProcess('relay', 'relay-1');
  startProcess('view', 'view-1');
  const stories = ['before.jsonl', 'second-key.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'];
  const all = join(dir, 'records.jsonl');
  writeFileSync(all, stories.map((f) => readFileSync(join(root, 'fixtures', f), 'utf8')).join(''));
  for (const story of stories) {
    process.stdout.write(
      amendsctl(['source-load', '--manifest', manifestPath, '--file', join(root, 'fixtures', story)]),
    );
  }
  say('\nwaiting until both partitions are decided, relayed and viewed …');
  await waitCaughtUp();
  process.stdout.write(amendsctl(['inspect', '--manifest', manifestPath]));
  const committed =
    amendsctl(['export', '--manifest', manifestPath, '--what', 'decisions']) +
    amendsctl(['export', '--manifest', manifestPath, '--what', 'outputs']);
  const simulated = amendsctl(['simulate', '--manifest', manifestPath, '--file', all]);
  writeFileSync(join(dir, 'export.jsonl'), committed);
  writeFileSync(join(dir, 'simulate.jsonl'), simulated);
  process.stdout.write(committed);
  const lines = committed.split('\n').filter(Boolean).length;
  if (committed === simulated) {
    say(`\ndemo: the workers' ${lines} committed decision and output lines equal simulate's, byte for byte.`);
  } else {
    say(`\ndemo: MISMATCH between export and simulate: compare ${dir}/export.jsonl and simulate.jsonl`);
    exitCode = 1;
  }
  // The view must hold, per (item, location, day), the highest committed version.
  const latest = new Map();
  for (const line of committed.split('\n').filter((l) => l.startsWith('{"type":"output"'))) {
    const o = JSON.parse(line);
    latest.set(JSON.stringify([o.item, o.location, o.day]), line.replace('{"type":"output"', '{"type":"view"'));
  }
  const view = amendsctl(['export', '--manifest', manifestPath, '--what', 'view']);
  writeFileSync(join(dir, 'view.jsonl'), view);
  process.stdout.write(view);
  const want = `${[...latest.values()].join('\n')}\n`;
  if (view === want) {
    say(`demo: the view holds the latest version of each of its ${latest.size} days, retractions included.`);
  } else {
    say(`demo: the VIEW differs from the latest committed versions: see ${dir}/view.jsonl`);
    exitCode = 1;
  }
} catch (error) {
  say(`demo: ${error.message}`);
  exitCode = 1;
} finally {
  await stopWorkers();
  say(`demo: manifest, records, exports and worker logs kept in ${dir}`);
}
process.exit(exitCode);
