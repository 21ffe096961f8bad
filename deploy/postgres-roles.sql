-- amends' three database roles and their exact grants (docs/operations.md, "Database roles
-- and schema"). Run once per database (and again after nothing: later migrations' tables
-- are covered by the default privileges below), as a superuser or as a role that is a
-- member of the migrate role, connected to the database amends uses:
--
--   psql "$ADMIN_DATABASE_URL" -v schema=amends -v migrate_role=amends_migrate \
--        -v run_role=amends_run -v read_role=amends_read -f deploy/postgres-roles.sql
--
-- The three roles must exist (CREATE ROLE … LOGIN PASSWORD …: their passwords are yours):
--   migrate  owns the schema and every table in it: `amendsctl migrate`, namespace-drop
--   run      reads and writes rows, deletes none: worker, relay, view, source-load,
--            output-create, config-revise (started with --no-migrate)
--   read     reads rows only: inspect, export, explain, balances, verify, wait, tui,
--            manifest-recover; and the SQL read API (schema <schema>_api: its views and
--            functions, docs/design.md "SQL read API")
-- Nothing here lets the run or read role create, alter or drop anything, or delete a row.

\set ON_ERROR_STOP on

GRANT CONNECT ON DATABASE :"DBNAME" TO :"migrate_role", :"run_role", :"read_role";

-- The schema, owned by the migrate role; `amendsctl migrate` creates its tables.
CREATE SCHEMA IF NOT EXISTS :"schema" AUTHORIZATION :"migrate_role";
GRANT USAGE ON SCHEMA :"schema" TO :"run_role", :"read_role";

-- Tables and sequences the migrate role creates from now on (every later migration's).
ALTER DEFAULT PRIVILEGES FOR ROLE :"migrate_role" IN SCHEMA :"schema"
  GRANT SELECT, INSERT, UPDATE ON TABLES TO :"run_role";
ALTER DEFAULT PRIVILEGES FOR ROLE :"migrate_role" IN SCHEMA :"schema"
  GRANT USAGE ON SEQUENCES TO :"run_role";
ALTER DEFAULT PRIVILEGES FOR ROLE :"migrate_role" IN SCHEMA :"schema"
  GRANT SELECT ON TABLES TO :"read_role";

-- What is there already (a database migrated before this script ran, or upgraded).
GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA :"schema" TO :"run_role";
GRANT USAGE ON ALL SEQUENCES IN SCHEMA :"schema" TO :"run_role";
GRANT SELECT ON ALL TABLES IN SCHEMA :"schema" TO :"read_role";

-- The SQL read API's schema (migration 11 fills it), owned by the migrate role like the tables:
-- made here because creating a schema needs CREATE on the database, which the migrate role lacks.
\set api_schema :schema '_api'
CREATE SCHEMA IF NOT EXISTS :"api_schema" AUTHORIZATION :"migrate_role";
-- The read role reads the API's views (which read the tables with their owner's rights) and
-- calls its functions (EXECUTE is PUBLIC's by default). A role for a BI tool needs only these
-- grants, and CONNECT: docs/operations.md "A role for a BI tool".
GRANT USAGE ON SCHEMA :"api_schema" TO :"read_role";
ALTER DEFAULT PRIVILEGES FOR ROLE :"migrate_role" IN SCHEMA :"api_schema"
  GRANT SELECT ON TABLES TO :"read_role";
GRANT SELECT ON ALL TABLES IN SCHEMA :"api_schema" TO :"read_role";
