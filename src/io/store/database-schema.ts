/**
 * The PostgreSQL schema that holds amends' tables (issue 35): `amends` unless
 * AMENDS_DATABASE_SCHEMA (or the URL's own `options=-c search_path=…`) names another. Every
 * session of every process sets `search_path` to that one schema in its startup packet, so
 * the SQL stays unqualified and nothing else in the database (its `public` schema, another
 * team's tables) is ever seen or shadowed. One schema, one plain name: a search path of
 * several schemas would let a table elsewhere stand in for a missing one of ours.
 */
import { operationalError } from '../../kernel/amends-error.js';

export const defaultSchema = 'amends';

/** A name PostgreSQL takes unquoted and keeps as written: nothing to quote, nothing folded. */
const plainName = /^[a-z_][a-z0-9_]{0,62}$/;

const schemaAdvice =
  'give one lower-case schema name (letters, digits, _), e.g. AMENDS_DATABASE_SCHEMA=amends (docs/operations.md "Database roles and schema")';

/** The `search_path` set by a URL's `options` (`-c search_path=x` or `--search_path=x`), if any. */
function urlSearchPath(url: URL): string | undefined {
  const options = url.searchParams.get('options') ?? '';
  const match = /(?:^|\s)(?:-c\s*|--)search_path=(\S*)/.exec(options);
  return match?.[1];
}

function checkedName(name: string, where: string): string {
  if (!plainName.test(name)) throw operationalError(`${where} is ${JSON.stringify(name)}: ${schemaAdvice}`);
  return name;
}

function parsed(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/** The schema a session of `url` works in: the URL's search_path, else the default. */
export function databaseSchema(url: string): string {
  const u = parsed(url);
  const own = u ? urlSearchPath(u) : undefined;
  return own === undefined ? defaultSchema : checkedName(own, "the search_path in AMENDS_DATABASE_URL's options");
}

/**
 * The URL with `option` added to its `options` (a startup-packet setting; the URL's own options
 * stay), spaces as %20: URLSearchParams writes them as `+`, which pg reads as a space but libpq
 * (psql, given the same URL) does not.
 */
function withOption(u: URL, option: string): string {
  const own = u.searchParams.get('options');
  u.searchParams.set('options', `${own ? `${own} ` : ''}${option}`);
  return u
    .toString()
    .replace(/([?&]options=)([^&#]*)/, (_, key: string, value: string) => `${key}${value.replaceAll('+', '%20')}`);
}

/** `withOption` for a URL string; an unparseable URL is returned as it is, for pg to report. */
export function withSessionOption(url: string, option: string): string {
  const u = parsed(url);
  return u ? withOption(u, option) : url;
}

/**
 * The URL every session connects with: its `options` set `search_path` to the schema (the
 * default when the URL names none). A URL's other options stay. An unparseable URL is
 * returned as it is, for pg to report.
 */
export function withSchemaPath(url: string): string {
  const u = parsed(url);
  if (!u) return url;
  if (urlSearchPath(u) !== undefined) {
    databaseSchema(url);
    return url;
  }
  return withOption(u, `-c search_path=${defaultSchema}`);
}

/**
 * The database URL of a process with AMENDS_DATABASE_SCHEMA applied: the schema goes into
 * the URL's options, so that every session (and every child process given this URL) works in
 * it. A URL that already sets another search_path is refused: two places would disagree.
 */
export function urlWithSchemaSetting(url: string, schemaSetting: string | undefined): string {
  const wanted = schemaSetting?.trim();
  if (!wanted) return url;
  const schema = checkedName(wanted, 'AMENDS_DATABASE_SCHEMA');
  const u = parsed(url);
  if (!u) return url;
  const own = urlSearchPath(u);
  if (own === undefined) return withOption(u, `-c search_path=${schema}`);
  if (own !== schema) {
    throw operationalError(
      `AMENDS_DATABASE_SCHEMA is ${schema} but AMENDS_DATABASE_URL's options set search_path=${own}: name the schema in one place (AMENDS_DATABASE_SCHEMA)`,
    );
  }
  return url;
}
