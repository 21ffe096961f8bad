/**
 * The verifier's patient snapshot reads (src/verify/patient-reads.ts) against a recording
 * session: a read cancelled by the statement or lock timeout is rolled back to its savepoint and
 * run again with doubled timeouts; any other error is the caller's at once; past the attempts,
 * one line that says what happened.
 */
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/io/store/postgres.js';
import { patientAttemptsMax, patientReads } from '../../src/verify/patient-reads.js';

/** A session that fails the read `failures` times with `code`, recording every statement. */
function session(failures: number, code = '57014') {
  const sent: string[] = [];
  let left = failures;
  const client = {
    query: async (text: string) => {
      sent.push(text);
      if (text === 'SELECT page' && left-- > 0) throw Object.assign(new Error('canceling statement'), { code });
      return { rows: [{ n: 1 }], rowCount: 1 };
    },
  };
  return { sent, client: client as unknown as Queryable };
}

describe('patient snapshot reads', () => {
  it('reads again inside a savepoint, each time with doubled timeouts that then stay', async () => {
    const { sent, client } = session(2);
    const reads = patientReads(client, 5_000, 'reading the store of namespace ns');
    expect((await reads.query('SELECT page')).rows).toEqual([{ n: 1 }]);
    await reads.query('SELECT next');
    expect(sent).toEqual([
      ...['SAVEPOINT verify_read', 'SELECT page', 'ROLLBACK TO SAVEPOINT verify_read', 'RELEASE SAVEPOINT verify_read'],
      'SET LOCAL statement_timeout = 10000; SET LOCAL lock_timeout = 10000',
      ...['SAVEPOINT verify_read', 'SELECT page', 'ROLLBACK TO SAVEPOINT verify_read', 'RELEASE SAVEPOINT verify_read'],
      'SET LOCAL statement_timeout = 20000; SET LOCAL lock_timeout = 20000',
      ...['SAVEPOINT verify_read', 'SELECT page', 'RELEASE SAVEPOINT verify_read'],
      ...['SAVEPOINT verify_read', 'SELECT next', 'RELEASE SAVEPOINT verify_read'],
    ]);
  });

  it('waits out a lock timeout the same way', async () => {
    const { client } = session(1, '55P03');
    await expect(patientReads(client, 5_000, 'reading').query('SELECT page')).resolves.toBeDefined();
  });

  it('passes any other error on at once', async () => {
    const { sent, client } = session(1, '42P01');
    await expect(patientReads(client, 5_000, 'reading').query('SELECT page')).rejects.toMatchObject({ code: '42P01' });
    expect(sent).toEqual(['SAVEPOINT verify_read', 'SELECT page']);
  });

  it('gives up after the last attempt with one line, not the server text', async () => {
    const { client } = session(patientAttemptsMax);
    await expect(patientReads(client, 5_000, 'reading the store of namespace ns').query('SELECT page')).rejects.toThrow(
      /^reading the store of namespace ns: one read was cancelled 5 times by the statement or lock timeout, the last time after 80 s: the database is too busy or a lock is held too long; nothing was judged, run verify again later$/,
    );
  });
});
