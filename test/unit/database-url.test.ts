/** AMENDS_DATABASE_URL's own checks (postgres.ts `databaseUrlFrom`): one line for each refusal. */
import { describe, expect, it } from 'vitest';
import { databaseUrlFrom } from '../../src/io/store/postgres.js';

const refusal = (url: string | undefined) => {
  try {
    databaseUrlFrom({ AMENDS_DATABASE_URL: url });
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`accepted ${url}`);
};

describe('AMENDS_DATABASE_URL', () => {
  it('takes one host, whatever the credentials and parameters hold', () => {
    for (const url of [
      'postgres://amends:pa,ss@db.example:5432/amends?sslmode=verify-full',
      'postgresql://db/amends',
      'postgres://u@10.0.0.5:6432/amends?options=-c%20search_path%3Dledger',
    ]) {
      expect(databaseUrlFrom({ AMENDS_DATABASE_URL: url })).toBe(url);
    }
  });

  it('refuses a libpq multi-host URL in one line naming its hosts and what to do', () => {
    const message = refusal('postgres://amends:secret@pg1:5432,pg2:5432/amends?target_session_attrs=read-write');
    expect(message).toMatch(
      /^AMENDS_DATABASE_URL names several hosts \(pg1:5432,pg2:5432\), a libpq multi-host URL, which node-postgres does not support: give the one address that always reaches the primary/,
    );
    expect(message).not.toContain('secret');
    expect(message.split('\n')).toHaveLength(1);
  });

  it('refuses no URL and a URL of another scheme', () => {
    expect(refusal(undefined)).toMatch(/^AMENDS_DATABASE_URL is not set: /);
    expect(refusal('mysql://db/amends')).toMatch(/^AMENDS_DATABASE_URL is not a postgres:\/\/ URL: /);
  });
});
