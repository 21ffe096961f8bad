/**
 * Vitest global setup: the integration suites talk to the real broker and database.
 * When either is unreachable the whole run fails here with one clear line, instead of
 * every test timing out (and never skipping: quality.md). It also brings the schema up to date.
 */
import { Socket } from 'node:net';
import pg from 'pg';
import { Database } from '../../src/io/store/postgres.js';
import { testBrokers, testDatabaseUrl } from './endpoints.js';

function tcpReachable(hostPort: string, timeoutMs: number): Promise<boolean> {
  const [host, port] = [
    hostPort.slice(0, hostPort.lastIndexOf(':')),
    Number(hostPort.slice(hostPort.lastIndexOf(':') + 1)),
  ];
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

export default async function requireStack(): Promise<void> {
  await requireEndpoints(testBrokers, testDatabaseUrl, 'run `npm run up` (or set AMENDS_TEST_DATABASE_URL)');
}

/**
 * The broker and the database answer, and the database's schema is current. `databaseAdvice`
 * says what to do when the database does not answer.
 */
export async function requireEndpoints(brokers: string, databaseUrl: string, databaseAdvice: string): Promise<void> {
  const broker = brokers.split(',')[0] ?? brokers;
  if (!(await tcpReachable(broker, 3000))) {
    throw new Error(`the test broker ${broker} is unreachable: run \`npm run up\` (or set AMENDS_TEST_BROKERS)`);
  }
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new Error(`the test database is unreachable (${(error as Error).message}): ${databaseAdvice}`);
  } finally {
    await client.end().catch(() => {});
  }
  // The schema is current before any file runs: a file that reads the tables before its first
  // worker (or any other writer) migrated them would otherwise pass only after another file.
  await (await Database.open(databaseUrl, 'amends-test-setup')).close();
}
