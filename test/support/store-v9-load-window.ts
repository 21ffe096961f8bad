/**
 * The batch's window read as every build up to schema 9 sent it (git bac1229,
 * src/io/store/sql/load-window.ts `loadWindowSql`), frozen here for the v7, v8 and v9 writers of
 * the upgrade test: the build after it also reads the partition row's claim, a column schemas 7
 * and 8 do not have. Its parameters and row are loadWindowValues' and LoadWindowRow's less the
 * claim. Test-only: nothing in src may use it.
 */
export const v9LoadWindowSql = `
  WITH r AS (
    SELECT u.item, u.location, u.txn, u.rev, u.day COLLATE "C" AS day
      FROM unnest($3::text[], $4::text[], $5::text[], $6::int[], $7::text[]) AS u(item, location, txn, rev, day)
  ), t AS (
    SELECT DISTINCT item, location, txn FROM r
  ), a AS (
    SELECT t.item, t.location, t.txn, h.rev, h.op, h.day, h.qty
      FROM t CROSS JOIN LATERAL (
        SELECT a.rev, a.op, a.day, a.qty FROM authority a
         WHERE a.ns = $8::int AND a.item = t.item COLLATE "C" AND a.location = t.location COLLATE "C"
           AND a.txn = t.txn COLLATE "C"
         LIMIT 1) AS h
  ), touched AS (
    SELECT r.item, r.location, least(r.day, a.day) AS day
      FROM r LEFT JOIN a ON a.item = r.item COLLATE "C" AND a.location = r.location COLLATE "C"
                        AND a.txn = r.txn COLLATE "C"
     WHERE a.rev IS NULL OR r.rev > a.rev
  ), e AS (
    SELECT item, location, min(day) AS day FROM touched WHERE day IS NOT NULL GROUP BY item, location
  ), w AS (
    SELECT f.* FROM e CROSS JOIN LATERAL (
      SELECT o.item, o.location, o.day, o.version, o.closing, o.status, o.retracted, o.qty, o.posts, o.cause_offset
        FROM output_days o
       WHERE o.ns = $8::int AND o.item = e.item COLLATE "C" AND o.location = e.location COLLATE "C"
         AND o.day >= e.day
       ORDER BY o.day) AS f
    UNION ALL
    SELECT c.* FROM e CROSS JOIN LATERAL (
      SELECT o.item, o.location, o.day, o.version, o.closing, o.status, o.retracted, o.qty, o.posts, o.cause_offset
        FROM output_days o
       WHERE o.ns = $8::int AND o.item = e.item COLLATE "C" AND o.location = e.location COLLATE "C"
         AND o.day < e.day AND NOT o.retracted
       ORDER BY o.day DESC LIMIT 1) AS c
  )
  SELECT p.epoch, p.frontier,
    (SELECT coalesce(json_agg(json_build_array(item, location, txn, rev, op, day, qty)), '[]') FROM a) AS authority,
    (SELECT coalesce(json_agg(json_build_array(item, location, day)), '[]') FROM e) AS earliest,
    (SELECT coalesce(json_agg(json_build_array(item, location, day, version, closing, status, retracted, qty, posts,
                                               cause_offset)), '[]') FROM w) AS days
  FROM (SELECT 1) AS one LEFT JOIN partitions p ON p.namespace = $1 AND p.partition = $2`;
