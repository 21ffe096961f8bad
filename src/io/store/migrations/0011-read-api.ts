import { apiSchemaOf } from '../read-api-schema.js';
import type { Migration } from './migration.js';

/**
 * The stable SQL read API, version 1 (issue 36; docs/design.md#sql-read-api): a schema of its own,
 * named after amends' schema with `_api` appended (`amends_api` beside `amends`), holding
 * documented views and functions over the internal tables. Dashboards, BI tools and `amendsctl
 * explain` / `balances` read it; the internal tables stay free to change shape.
 *
 * Why a schema of its own: a read-only role is granted that schema alone (USAGE, SELECT on its
 * views, EXECUTE on its functions: deploy/postgres-roles.sql). Its views run with their owner's
 * rights (a view is checked as its owner), and its functions read only the API's own views, so
 * that role needs nothing of the internal schema.
 *
 * Why the functions are SQL-standard bodies (`BEGIN ATOMIC`): their names are bound when they are
 * created (no search_path at call time), PostgreSQL records their dependencies (a later migration
 * cannot drop a column the API reads without dropping the API object first), and a single-SELECT
 * body is inlined into the caller's query, so `balances_as_of` streams by index ranges instead of
 * being materialised (test/integration/read-api-plans.test.ts explains each question).
 *
 * As of a position (`through`): a bigint[] whose element i+1 is partition i's last included source
 * offset; a NULL or missing element bounds nothing (everything decided there). A version is in
 * when its cause offset is at or below its partition's bound; a transaction's revision as of the
 * bound is its last APPLIED decision at or below it (a stock key's records all lie on its
 * partition, docs/design.md#configuration). `positions_at` turns a time into such an array: per
 * partition the last offset decided at or before it (`decisions.decided_at`, the batch statement's transaction time,
 * which grows with the offset on a partition: one batch commits after the other).
 *
 * The index `decisions_applied_by_txn` finds a transaction's revision as of a bound in one step
 * (its last APPLIED decision at or below it). It costs one index entry per APPLIED decision in
 * the batch statement's insert (the statement itself is unchanged). Built once here over the
 * existing decisions, which may take a while on a large ledger. It names no partition, and
 * neither does the probe (a key's decisions all lie on its partition): so no other index can
 * give the probe its order, and no statistics can make the planner walk a partition's
 * decisions backwards instead (with the partition named, `decisions_pkey` could, and a database
 * analyzed while empty chose it: test/integration/read-api-plans.test.ts).
 *
 * The API schema's name is the internal schema's with `_api` appended (read-api-schema.ts), so
 * each migrated schema (a test's, a second deployment's) has its own API beside it.
 */
const apiDefinitions = `
  COMMENT ON SCHEMA @api IS 'amends SQL read API, version 1 (docs/design.md#sql-read-api)';

  CREATE FUNCTION @api.api_version() RETURNS integer LANGUAGE sql IMMUTABLE RETURN 1;

  CREATE VIEW @api.namespaces AS
    SELECT n.namespace, n.id AS namespace_id, n.source_topic, n.source_incarnation,
           (n.config->>'partitions')::integer AS partitions, n.config->>'ledger_origin' AS ledger_origin, n.created_at
      FROM namespaces n;

  -- Revision 1 is the registered configuration, in force from offset 0 everywhere.
  CREATE VIEW @api.configurations AS
    SELECT n.namespace, 1 AS revision, array_fill(0::bigint, ARRAY[(n.config->>'partitions')::integer]) AS from_offsets,
           n.config
      FROM namespaces n
    UNION ALL
    SELECT r.namespace, r.revision, r.from_offsets, r.config FROM config_revisions r;

  -- Every partition of every namespace; frontier = the next offset to decide (0 before a first claim).
  CREATE VIEW @api.partitions AS
    SELECT n.namespace, n.id AS namespace_id, p.partition, coalesce(r.frontier, 0) AS frontier
      FROM namespaces n
      CROSS JOIN LATERAL generate_series(0, (n.config->>'partitions')::integer - 1) AS p(partition)
      LEFT JOIN partitions r ON r.namespace = n.namespace AND r.partition = p.partition;

  -- The per-record views join the namespace's name on its id with a LEFT JOIN (every row has a
  -- registered namespace): the planner drops it where the name is not asked for, so the API's
  -- own functions, which correlate on namespace_id, read one index range and nothing else.
  CREATE VIEW @api.decisions AS
    SELECT n.namespace, d.ns AS namespace_id, d.partition, d.record_offset, d.outcome, d.item, d.location, d.txn,
           d.rev, d.quarantined, d.detail, d.decided_at, d.raw_key, d.raw_value
      FROM decisions d LEFT JOIN namespaces n ON n.id = d.ns;

  CREATE VIEW @api.quarantine AS
    SELECT n.namespace, d.ns AS namespace_id, d.partition, d.record_offset, d.outcome, d.item, d.location, d.txn,
           d.rev, d.detail, d.decided_at, d.raw_key, d.raw_value
      FROM decisions d LEFT JOIN namespaces n ON n.id = d.ns
     WHERE d.quarantined;

  -- Every revision that became its transaction's authority (APPLIED), with what its envelope says:
  -- an APPLIED envelope passed strict decoding (docs/design.md#envelope), so it is valid JSON.
  CREATE VIEW @api.applied_revisions AS
    SELECT n.namespace, d.ns AS namespace_id, d.item, d.location, d.txn, d.rev, e.op, e.day COLLATE "C" AS day,
           e.qty, d.partition, d.record_offset, d.decided_at, d.raw_key, d.raw_value
      FROM decisions d LEFT JOIN namespaces n ON n.id = d.ns
      CROSS JOIN LATERAL jsonb_to_record(convert_from(d.raw_value, 'UTF8')::jsonb) AS e(op text, day text, qty integer)
     WHERE d.outcome = 'APPLIED';

  -- The authority now: each transaction's authoritative revision and the decision that made it.
  CREATE VIEW @api.transactions AS
    SELECT n.namespace, a.ns AS namespace_id, a.item, a.location, a.txn, a.rev, a.op, a.day, a.qty,
           a.cause_partition, a.cause_offset
      FROM authority a LEFT JOIN namespaces n ON n.id = a.ns;

  -- Every output version, with the decision that caused it (its outcome, txn and revision).
  CREATE VIEW @api.balance_versions AS
    SELECT n.namespace, v.ns AS namespace_id, v.item, v.location, v.day, v.version, v.closing, v.status, v.retracted,
           v.cause_partition, v.cause_offset, c.outcome AS cause_outcome, c.txn AS cause_txn, c.rev AS cause_rev,
           v.created_at AS committed_at
      FROM output_versions v LEFT JOIN namespaces n ON n.id = v.ns
      LEFT JOIN decisions c ON c.ns = v.ns AND c.partition = v.cause_partition AND c.record_offset = v.cause_offset;

  -- The latest version of every day that ever had one, retractions included.
  CREATE VIEW @api.latest_versions AS
    SELECT n.namespace, d.ns AS namespace_id, d.item, d.location, d.day, d.version, d.closing, d.status, d.retracted,
           d.cause_partition, d.cause_offset
      FROM output_days d LEFT JOIN namespaces n ON n.id = d.ns;

  -- The current closing balances: every active day's latest version (docs/design.md#output-versions).
  CREATE VIEW @api.balances AS
    SELECT n.namespace, d.ns AS namespace_id, d.item, d.location, d.day, d.version, d.closing, d.status,
           d.cause_partition, d.cause_offset
      FROM output_days d LEFT JOIN namespaces n ON n.id = d.ns
     WHERE NOT d.retracted;

  -- A partition's bound in a through array (NULL or missing: no bound).
  CREATE FUNCTION @api.bound(through bigint[], partition integer) RETURNS bigint
    LANGUAGE sql IMMUTABLE RETURN coalesce(through[partition + 1], 9223372036854775807);

  -- The closing balances of every active day as of the bound, by (item, location, day).
  CREATE FUNCTION @api.balances_as_of(in_namespace text, through bigint[], for_item text DEFAULT NULL,
                                      for_location text DEFAULT NULL, from_day text DEFAULT NULL,
                                      to_day text DEFAULT NULL)
    RETURNS TABLE (item text, location text, day text, version integer, closing bigint, status text,
                   cause_partition integer, cause_offset bigint)
    LANGUAGE sql STABLE
  BEGIN ATOMIC
    SELECT d.item, d.location, d.day, v.version, v.closing, v.status, v.cause_partition, v.cause_offset
      FROM @api.latest_versions d
      CROSS JOIN LATERAL (
        SELECT w.version, w.closing, w.status, w.retracted, w.cause_partition, w.cause_offset
          FROM @api.balance_versions w
         WHERE w.namespace_id = d.namespace_id AND w.item = d.item AND w.location = d.location AND w.day = d.day
           AND w.cause_offset <= @api.bound(balances_as_of.through, w.cause_partition)
         ORDER BY w.version DESC
         LIMIT 1) v
     WHERE d.namespace_id = (SELECT n.namespace_id FROM @api.namespaces n WHERE n.namespace = balances_as_of.in_namespace)
       AND (balances_as_of.for_item IS NULL OR d.item = balances_as_of.for_item)
       AND (balances_as_of.for_location IS NULL OR d.location = balances_as_of.for_location)
       AND (balances_as_of.from_day IS NULL OR d.day >= balances_as_of.from_day)
       AND (balances_as_of.to_day IS NULL OR d.day <= balances_as_of.to_day)
       AND NOT v.retracted
     ORDER BY d.item, d.location, d.day;
  END;

  -- One day's versions as of the bound, oldest first.
  CREATE FUNCTION @api.versions_as_of(in_namespace text, for_item text, for_location text, on_day text,
                                      through bigint[])
    RETURNS TABLE (version integer, closing bigint, status text, retracted boolean, cause_partition integer,
                   cause_offset bigint, cause_outcome text, cause_txn text, cause_rev integer,
                   committed_at timestamptz)
    LANGUAGE sql STABLE
  BEGIN ATOMIC
    SELECT v.version, v.closing, v.status, v.retracted, v.cause_partition, v.cause_offset, v.cause_outcome,
           v.cause_txn, v.cause_rev, v.committed_at
      FROM @api.balance_versions v
     WHERE v.namespace_id = (SELECT n.namespace_id FROM @api.namespaces n WHERE n.namespace = versions_as_of.in_namespace)
       AND v.item = versions_as_of.for_item AND v.location = versions_as_of.for_location
       AND v.day = versions_as_of.on_day
       AND v.cause_offset <= @api.bound(versions_as_of.through, v.cause_partition)
     ORDER BY v.version;
  END;

  -- The transactions that make up a day's closing as of the bound: each one's revision then,
  -- when it is a post on that day or before (closing = the key's opening + the sum of qty).
  -- Each transaction's revision is one step of decisions_applied_by_txn, down from the
  -- authority's cause (or from the bound, when the authority changed after it).
  CREATE FUNCTION @api.contributions_as_of(in_namespace text, for_item text, for_location text, on_day text,
                                           through bigint[])
    RETURNS TABLE (txn text, rev integer, day text, qty integer, partition integer, record_offset bigint,
                   decided_at timestamptz, raw_key bytea, raw_value bytea)
    LANGUAGE sql STABLE
  BEGIN ATOMIC
    SELECT r.txn, r.rev, r.day, r.qty, r.partition, r.record_offset, r.decided_at, r.raw_key, r.raw_value
      FROM @api.transactions t
      CROSS JOIN LATERAL (
        SELECT a.txn, a.rev, a.op, a.day, a.qty, a.partition, a.record_offset, a.decided_at, a.raw_key, a.raw_value
          FROM @api.applied_revisions a
         WHERE a.namespace_id = t.namespace_id AND a.item = t.item AND a.location = t.location AND a.txn = t.txn
           AND a.record_offset <= least(t.cause_offset, @api.bound(contributions_as_of.through, t.cause_partition))
         ORDER BY a.record_offset DESC
         LIMIT 1) r
     WHERE t.namespace_id = (SELECT n.namespace_id FROM @api.namespaces n
                              WHERE n.namespace = contributions_as_of.in_namespace)
       AND t.item = contributions_as_of.for_item AND t.location = contributions_as_of.for_location
       AND r.op = 'post' AND r.day <= contributions_as_of.on_day
     ORDER BY r.day, r.partition, r.record_offset;
  END;

  -- Per partition, the last offset decided at or before the time (-1: none), as a through array.
  -- A binary search over the partition's decisions (decided_at grows with the offset), one index
  -- step per halving: its cost is the logarithm of the partition's length.
  CREATE FUNCTION @api.positions_at(in_namespace text, at timestamptz) RETURNS bigint[]
    LANGUAGE plpgsql STABLE AS $body$
    DECLARE
      through bigint[] := '{}';
      part record;
      lo bigint;
      hi bigint;
      mid bigint;
      found_offset bigint;
      found_at timestamptz;
    BEGIN
      FOR part IN SELECT p.namespace_id, p.partition, p.frontier FROM @api.partitions p
                   WHERE p.namespace = positions_at.in_namespace ORDER BY p.partition LOOP
        lo := -1;
        hi := part.frontier;
        WHILE hi - lo > 1 LOOP
          mid := lo + (hi - lo) / 2;
          SELECT d.record_offset, d.decided_at INTO found_offset, found_at FROM @api.decisions d
           WHERE d.namespace_id = part.namespace_id AND d.partition = part.partition
             AND d.record_offset >= mid AND d.record_offset < hi
           ORDER BY d.record_offset LIMIT 1;
          IF NOT FOUND OR found_at > positions_at.at THEN
            hi := mid;
          ELSE
            lo := found_offset;
          END IF;
        END LOOP;
        through := through || lo;
      END LOOP;
      RETURN through;
    END
  $body$;
`;

export const readApiMigration: Migration = {
  version: 11,
  name: 'read_api',
  // Indexing a large ledger's decisions once may take longer than a normal statement.
  statementTimeoutMs: 3_600_000,
  sql: ({ schema }) => `
    CREATE INDEX decisions_applied_by_txn ON decisions (ns, item, location, txn, record_offset)
      WHERE outcome = 'APPLIED';

    -- Created only when missing: creating a schema needs CREATE on the database, which a migrate
    -- role given the API schema by its DBA (deploy/postgres-roles.sql) does not have.
    DO $api$
    BEGIN
      IF to_regnamespace('${apiSchemaOf(schema)}') IS NULL THEN
        CREATE SCHEMA ${apiSchemaOf(schema)};
      END IF;
    END
    $api$;
    ${apiDefinitions.replaceAll('@api', apiSchemaOf(schema))}
  `,
};
