/**
 * Fresh PostgreSQL schemas of the test database for suites that need a database of their
 * own (an empty one, an older schema): a URL whose sessions see only that schema, and a
 * drop of every schema made, in afterAll.
 */
import type pg from 'pg';
import { testDatabaseUrl, testName } from './endpoints.js';

/** A URL whose sessions see only `schema` (plus pg_catalog). */
export function urlForSchema(schema: string): string {
  const url = new URL(testDatabaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

export class TestSchemas {
  private readonly own: string[] = [];

  constructor(
    private readonly admin: Pick<pg.Client, 'query'>,
    private readonly prefix = 'amends_test',
  ) {}

  /** Creates an empty schema named `<prefix>_…` and returns its name. */
  async fresh(): Promise<string> {
    const schema = testName(this.prefix).replaceAll('-', '_');
    await this.admin.query(`CREATE SCHEMA ${schema}`);
    this.own.push(schema);
    return schema;
  }

  /** Each schema and its read API's schema (`<schema>_api`, migration 0011), which the migrations made beside it. */
  async dropAll(): Promise<void> {
    for (const schema of this.own.splice(0)) {
      await this.admin.query(`DROP SCHEMA IF EXISTS ${schema}_api CASCADE`);
      await this.admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  }
}
