/**
 * amends' own schema (database-schema.ts, issue 35): every session's URL names exactly one
 * schema in its startup options, from AMENDS_DATABASE_SCHEMA, the URL's own search_path or the
 * default; anything else is refused in one line naming where it came from.
 */
import { describe, expect, it } from 'vitest';
import { databaseSchema, defaultSchema, withSchemaPath } from '../../src/io/store/database-schema.js';
import { databaseUrlFrom, sessionConfig } from '../../src/io/store/postgres.js';

const base = 'postgres://amends:secret@db.example:5432/ledger?sslmode=verify-full';

function refusal(env: NodeJS.ProcessEnv): string {
  try {
    databaseUrlFrom(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('the schema of amends tables', () => {
  it('is amends unless something names another, and every session sets it', () => {
    expect(defaultSchema).toBe('amends');
    const url = databaseUrlFrom({ AMENDS_DATABASE_URL: base });
    expect(databaseSchema(url)).toBe('amends');
    const session = new URL(sessionConfig(url, 'test').connectionString as string);
    expect(session.searchParams.get('options')).toBe('-c search_path=amends');
    // libpq's spelling (%20), so that psql given the same URL reads the same option.
    expect(withSchemaPath(base)).toContain('options=-c%20search_path%3Damends');
  });

  it('comes from AMENDS_DATABASE_SCHEMA, into the URL child processes are given', () => {
    const url = databaseUrlFrom({ AMENDS_DATABASE_URL: base, AMENDS_DATABASE_SCHEMA: 'ledger_prod' });
    expect(databaseSchema(url)).toBe('ledger_prod');
    expect(withSchemaPath(url)).toBe(url);
    expect(new URL(url).searchParams.get('sslmode')).toBe('verify-full');
  });

  it("keeps the URL's other options, and its own search_path when it names one schema", () => {
    const own = `${base}&options=-c%20statement_timeout%3D1000%20-c%20search_path%3Dledger`;
    expect(databaseSchema(databaseUrlFrom({ AMENDS_DATABASE_URL: own }))).toBe('ledger');
    const other = `${base}&options=-c%20work_mem%3D64MB`;
    expect(new URL(withSchemaPath(other)).searchParams.get('options')).toBe('-c work_mem=64MB -c search_path=amends');
    // The same name in both places is one setting, not a conflict.
    expect(databaseSchema(databaseUrlFrom({ AMENDS_DATABASE_URL: own, AMENDS_DATABASE_SCHEMA: 'ledger' }))).toBe(
      'ledger',
    );
  });

  it('refuses a name PostgreSQL would fold or need quoted, a path of several schemas, and two names', () => {
    for (const name of ['Amends', 'amends-prod', '1amends', 'a'.repeat(64), 'amends;drop']) {
      expect(refusal({ AMENDS_DATABASE_URL: base, AMENDS_DATABASE_SCHEMA: name })).toMatch(
        /^AMENDS_DATABASE_SCHEMA is ".*": give one lower-case schema name/,
      );
    }
    expect(refusal({ AMENDS_DATABASE_URL: `${base}&options=-c%20search_path%3Da,b` })).toMatch(
      /^the search_path in AMENDS_DATABASE_URL's options is "a,b": give one lower-case schema name/,
    );
    expect(
      refusal({ AMENDS_DATABASE_URL: `${base}&options=-c%20search_path%3Dledger`, AMENDS_DATABASE_SCHEMA: 'amends' }),
    ).toBe(
      "AMENDS_DATABASE_SCHEMA is amends but AMENDS_DATABASE_URL's options set search_path=ledger: name the schema in one place (AMENDS_DATABASE_SCHEMA)",
    );
  });
});
