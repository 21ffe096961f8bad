/**
 * deploy/Containerfile, checked as far as a machine without a container engine can (no
 * podman, docker daemon or hadolint here; docs/operations.md, "Deploying"): its instructions
 * parsed, every COPY source present (in the build context and not ignored by .dockerignore,
 * or made by the build stage), the entrypoint a real executable of the package's `bin`, the
 * build stage's Debian packages those scripts/bootstrap.sh builds the Kafka client with, and
 * the runtime stage's packages holding every shared library the built client links (readelf
 * and dpkg on this machine's build of the same lock file).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/amendsctl-process.js';

interface Instruction {
  stage: number;
  op: string;
  args: string;
}

/** Instructions in order, continuation lines joined, comments dropped, each with its stage. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  const logical = text.replace(/\\\n/g, ' ').split('\n');
  for (const line of logical) {
    const m = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (m === null || line.trimStart().startsWith('#')) continue;
    if (m[1] === 'FROM') stage++;
    out.push({ stage, op: m[1] as string, args: (m[2] as string).replace(/\s+/g, ' ').trim() });
  }
  return out;
}

const containerfile = readFileSync(join(repoRoot, 'deploy/Containerfile'), 'utf8');
const steps = instructions(containerfile);
const ignored = readFileSync(join(repoRoot, '.dockerignore'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.startsWith('#'));
const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { bin: Record<string, string> };

/** The packages of each `apt-get install` in a stage. */
function aptPackages(stage: number): string[] {
  return steps
    .filter((s) => s.stage === stage && s.op === 'RUN' && s.args.includes('apt-get install'))
    .flatMap((s) => (s.args.split('apt-get install')[1] ?? '').split('&&')[0]?.trim().split(' ') ?? [])
    .filter((w) => w !== '' && !w.startsWith('-'));
}

describe('deploy/Containerfile', () => {
  it('has a build stage and a runtime stage, both on Node 20', () => {
    const from = steps.filter((s) => s.op === 'FROM');
    expect(from.map((s) => s.args)).toEqual([`\${NODE_IMAGE} AS build`, `\${NODE_IMAGE}`]);
    expect(steps.find((s) => s.op === 'ARG')?.args).toMatch(/^NODE_IMAGE=\S+\/node:20-bookworm-slim$/);
  });

  it('copies only what exists in the build context and is not ignored', () => {
    const copies = steps.filter((s) => s.op === 'COPY' && !s.args.startsWith('--from'));
    expect(copies.length).toBeGreaterThan(4);
    for (const { args } of copies) {
      const sources = args.split(' ').slice(0, -1);
      for (const source of sources) {
        expect(existsSync(join(repoRoot, source)), source).toBe(true);
        expect(ignored.includes(source.split('/')[0] as string), `${source} is in .dockerignore`).toBe(false);
      }
    }
  });

  it('copies from the build stage only what that stage made', () => {
    const build = steps.filter((s) => s.stage === 0);
    const workdir = build.find((s) => s.op === 'WORKDIR')?.args;
    const outDir = (
      JSON.parse(readFileSync(join(repoRoot, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { outDir: string } }
    ).compilerOptions.outDir;
    const made = new Set<string>();
    for (const s of build) {
      if (s.op === 'COPY') for (const source of s.args.split(' ').slice(0, -1)) made.add(`${workdir}/${source}`);
      if (s.op === 'RUN' && /\bnpm ci\b/.test(s.args)) made.add(`${workdir}/node_modules`);
      if (s.op === 'RUN' && s.args.includes('tsc -p tsconfig.build.json')) made.add(`${workdir}/${outDir}`);
    }
    const fromBuild = steps.filter((s) => s.op === 'COPY' && s.args.startsWith('--from=build'));
    expect(fromBuild.map((s) => s.args.split(' ')[1])).toEqual([
      '/build/package.json',
      '/build/node_modules',
      '/build/dist',
    ]);
    for (const s of fromBuild) expect(made.has(s.args.split(' ')[1] as string), s.args).toBe(true);
  });

  it("runs the package's amends executable", () => {
    const runtime = steps.filter((s) => s.stage === 1);
    const entry = JSON.parse(runtime.find((s) => s.op === 'ENTRYPOINT')?.args ?? '[]') as string[];
    const workdir = runtime.find((s) => s.op === 'WORKDIR')?.args;
    expect(entry).toEqual([`${workdir}/${packageJson.bin.amends}`]);
    expect(runtime.some((s) => s.op === 'COPY' && s.args === 'bin ./bin')).toBe(true);
    for (const bin of Object.values(packageJson.bin)) accessSync(join(repoRoot, bin), constants.X_OK);
    expect(runtime.find((s) => s.op === 'USER')?.args).toBe('node');
  });

  it('builds the Kafka client as bootstrap.sh does: CKJS_LINKING=dynamic and the same -dev packages', () => {
    const bootstrap = readFileSync(join(repoRoot, 'scripts/bootstrap.sh'), 'utf8');
    const wanted = (/^build_packages=\(([^)]*)\)/m.exec(bootstrap)?.[1] ?? '').split(' ');
    expect(wanted.length).toBeGreaterThan(5);
    expect(aptPackages(0).sort()).toEqual([...wanted].sort());
    expect(steps.some((s) => s.stage === 0 && s.op === 'RUN' && s.args.startsWith('CKJS_LINKING=dynamic npm ci'))).toBe(
      true,
    );
  });

  it('installs, in the runtime stage, the package of every library the built client links', () => {
    const client = join(repoRoot, 'node_modules/@confluentinc/kafka-javascript/build');
    const objects = ['Release/confluent-kafka-javascript.node', 'deps/librdkafka.so.1', 'deps/librdkafka++.so.1'];
    const needed = new Set<string>();
    for (const object of objects) {
      const dynamic = execFileSync('readelf', ['-d', join(client, object)], { encoding: 'utf8' });
      for (const m of dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)) needed.add(m[1] as string);
    }
    // The client's own libraries travel inside node_modules; glibc, libstdc++ and libgcc come with Node's image.
    const inImage = new Set(['libc6', 'libstdc++6', 'libgcc-s1']);
    const runtime = new Set([...aptPackages(1), ...inImage]);
    const owners = debianPackagesOf([...needed].filter((lib) => !lib.startsWith('librdkafka')));
    expect(owners.size).toBeGreaterThan(5);
    for (const [lib, owner] of owners) expect(runtime.has(owner), `${lib} comes from ${owner}`).toBe(true);
  });
});

/** The Debian package that ships each shared library as this machine resolves it (one dpkg -S: it is slow). */
function debianPackagesOf(sonames: string[]): Map<string, string> {
  const cache = execFileSync('/sbin/ldconfig', ['-p'], { encoding: 'utf8' });
  const paths = new Map<string, string>();
  for (const soname of sonames) {
    const escaped = soname.replace(/[.+]/g, '\\$&');
    const path = new RegExp(`^\\s+${escaped} \\(libc6,x86-64\\) => (\\S+)$`, 'm').exec(cache)?.[1];
    if (path === undefined) throw new Error(`${soname} is not in the linker cache`);
    // merged /usr: dpkg knows each file under one of /lib and /usr/lib
    paths.set(path.replace(/^\/usr\/lib\//, '/lib/'), soname);
    paths.set(path.replace(/^\/lib\//, '/usr/lib/'), soname);
  }
  // dpkg -S exits 1 when some path has no owner; the owned ones are still listed.
  const listed = spawnSync('dpkg', ['-S', ...paths.keys()], { encoding: 'utf8' }).stdout;
  const owners = new Map<string, string>();
  for (const m of listed.matchAll(/^([^:\s]+)(?::\w+)?: (\S+)$/gm)) {
    const soname = paths.get(m[2] as string);
    if (soname !== undefined) owners.set(soname, m[1] as string);
  }
  for (const soname of sonames) if (!owners.has(soname)) throw new Error(`no Debian package owns ${soname}`);
  return owners;
}
