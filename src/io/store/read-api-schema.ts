/**
 * The SQL read API's schema (migration 0011, docs/design.md#sql-read-api): amends' own schema's
 * name with `_api` appended, `amends_api` beside `amends`. Both are plain names
 * (database-schema.ts), so the API's needs no quoting either.
 */
import { operationalError } from '../../kernel/amends-error.js';
import { databaseSchema } from './database-schema.js';

/** PostgreSQL's longest identifier (NAMEDATALEN − 1): a longer one is cut short, silently. */
const identifierBytesMax = 63;

/** The API schema of amends' schema `schema`. */
export function apiSchemaOf(schema: string): string {
  const api = `${schema}_api`;
  if (api.length > identifierBytesMax) {
    throw operationalError(
      `amends' schema ${schema} is too long a name for its read API's schema ${api} (at most ${identifierBytesMax} characters): name amends' schema with at most ${identifierBytesMax - 4}`,
    );
  }
  return api;
}

/** The API schema of the schema a session of `url` works in. */
export function apiSchemaFor(url: string): string {
  return apiSchemaOf(databaseSchema(url));
}
