/**
 * The batch commit (postgres-state.ts `process`, the warm-up's last statement): its text and
 * its row. Its parameters are built by commit-batch-values.ts; what its row means is
 * commit-verdict.ts's.
 */

import { outboxChannel } from '../outbox-channel.js';
import type { EpochFrontierRow } from './partition-row.js';

/**
 * The whole batch commit, one statement (its own transaction). `ok` holds a row only when
 * the row-locked partition has the request's epoch and frontier and none of the transactions
 * the window cache took as new is stored (`fresh`: one LATERAL probe per transaction, for the
 * reason `loadWindowSql` gives; as a join, a new namespace's cached generic plan read its whole
 * authority by a bitmap scan per batch: 9,635 rows at batch size 1 in the bench, the store
 * call growing from 1.2 to 2.7 ms over 30 s); every write depends on it.
 * `w` reads the other steps' counts, so it runs after them: its clock reading is the work
 * time just before COMMIT (the figure cannot include its own commit, docs/design.md#logs-and-exit). The
 * client cannot time inside a one-round-trip transaction, so the server's clock does it.
 *
 *  $1 namespace, $2 partition, $3 epoch, $4 expected frontier, $5 new frontier,
 *  $6–$15 decisions, $16–$23 authority (one row per txn), $24–$33 output versions with their
 *  outbox records (one row each, ids drawn in this order under the partition's lock: the relay's
 *  cursor relies on it, migration 0007), $34 counts by outcome, $35 notify, $36–$45 the day rows the batch changed
 *  (key-window.ts `dayRowChanges`: a new latest version or a new total, one upsert row per day,
 *  picked by the client, so no server-side sort of every version of a big batch), $46 the
 *  namespace's id, which keys the per-record tables (migration 0006; partitions keep the text),
 *  $47–$49 the transactions taken as new without a read (window-cache.ts), $50 the configuration
 *  revision the batch was decided under: the newest the store knows (migration 0008), checked
 *  like the epoch, so no record is decided under a revision older than the namespace's newest;
 *  $51 the claim of this store's claim of the partition (migration 0009), checked with the
 *  epoch, so a worker whose claim a database that went back in time lost is fenced even where
 *  the epoch number was handed out again.
 */
export const commitBatchSql = `
  WITH p AS (
    SELECT epoch, frontier, config_revision, claim FROM partitions WHERE namespace = $1 AND partition = $2 FOR UPDATE
  ), fresh AS (
    SELECT count(*)::int AS stale
      FROM unnest($47::text[], $48::text[], $49::text[]) AS u(item, location, txn)
      CROSS JOIN LATERAL (
        SELECT 1 FROM authority a
         WHERE a.ns = $46::int AND a.item = u.item COLLATE "C" AND a.location = u.location COLLATE "C"
           AND a.txn = u.txn COLLATE "C"
         LIMIT 1) AS held
  ), ok AS (
    SELECT 1 FROM p, fresh
     WHERE p.epoch = $3 AND p.claim = $51::uuid AND p.frontier = $4 AND p.config_revision = $50 AND fresh.stale = 0
  ), d AS (
    INSERT INTO decisions (ns, partition, record_offset, outcome, item, location, txn, rev,
                           raw_key, raw_value, quarantined, detail, epoch)
    SELECT $46::int, $2, u.o, u.outcome, u.item, u.location, u.txn, u.rev, u.k, u.v, u.q, u.detail, $3
      FROM unnest($6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[],
                  $12::bytea[], $13::bytea[], $14::bool[], $15::text[])
           AS u(o, outcome, item, location, txn, rev, k, v, q, detail)
     WHERE EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  ), a AS (
    INSERT INTO authority AS t (ns, item, location, txn, rev, op, day, qty, cause_partition, cause_offset)
    SELECT $46::int, u.item, u.location, u.txn, u.rev, u.op, u.day, u.qty, $2, u.cause
      FROM unnest($16::text[], $17::text[], $18::text[], $19::int[], $20::text[], $21::text[], $22::int[],
                  $23::bigint[]) AS u(item, location, txn, rev, op, day, qty, cause)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (ns, item, location, txn) DO UPDATE
       SET rev = EXCLUDED.rev, op = EXCLUDED.op, day = EXCLUDED.day, qty = EXCLUDED.qty,
           cause_partition = EXCLUDED.cause_partition, cause_offset = EXCLUDED.cause_offset
     WHERE amends_assert(t.rev < EXCLUDED.rev, 'authority revision must grow: ' || t.txn)
    RETURNING 1
  ), v AS (
    INSERT INTO output_versions (ns, item, location, day, version, closing, status, retracted,
                                 cause_partition, cause_offset, record_key, record_value)
    SELECT $46::int, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause, u.k, u.v
      FROM unnest($24::text[], $25::text[], $26::text[], $27::int[], $28::bigint[], $29::text[], $30::bool[],
                  $31::bigint[], $32::bytea[], $33::bytea[]) WITH ORDINALITY
           AS u(item, location, day, version, closing, status, retracted, cause, k, v, n)
     WHERE EXISTS (SELECT 1 FROM ok)
     ORDER BY u.n
    RETURNING 1
  ), od AS (
    INSERT INTO output_days AS t (ns, item, location, day, version, closing, status, retracted,
                                  cause_partition, cause_offset, qty, posts)
    SELECT $46::int, u.item, u.location, u.day, u.version, u.closing, u.status, u.retracted, $2, u.cause, u.qty, u.posts
      FROM unnest($36::text[], $37::text[], $38::text[], $39::int[], $40::bigint[], $41::text[], $42::bool[],
                  $43::bigint[], $44::bigint[], $45::int[])
           AS u(item, location, day, version, closing, status, retracted, cause, qty, posts)
     WHERE EXISTS (SELECT 1 FROM ok)
    ON CONFLICT (ns, item, location, day) DO UPDATE
       SET version = EXCLUDED.version, closing = EXCLUDED.closing, status = EXCLUDED.status,
           retracted = EXCLUDED.retracted, cause_partition = EXCLUDED.cause_partition,
           cause_offset = EXCLUDED.cause_offset, qty = EXCLUDED.qty, posts = EXCLUDED.posts
     -- A new version, or the same version with a new total only (a qty-0 post, changes that net out).
     WHERE amends_assert(t.version < EXCLUDED.version
                         OR (t.version = EXCLUDED.version AND t.closing IS NOT DISTINCT FROM EXCLUDED.closing
                             AND t.retracted = EXCLUDED.retracted AND t.cause_offset = EXCLUDED.cause_offset),
                         'output version must grow: ' || t.day)
    RETURNING 1
  ), w AS (
    UPDATE partitions
       SET frontier = $5,
           last_first_offset = $6[1],
           last_last_offset = $6[cardinality($6)],
           last_records = CASE WHEN amends_assert(
                                 c.d = cardinality($6) AND c.a = cardinality($16) AND c.v = cardinality($24)
                                 AND c.od = cardinality($36),
                                 'batch rows written: ' || c.d || ' ' || c.a || ' ' || c.v || ' ' || c.od)
                          THEN cardinality($6) END,
           last_counts = $34::jsonb,
           last_epoch = $3,
           last_work_elapsed_ns = greatest(0, round(extract(epoch FROM clock_timestamp() - transaction_timestamp())
                                                    * 1000000000))::bigint,
           last_committed_at = clock_timestamp()
      FROM (SELECT (SELECT count(*) FROM d) AS d, (SELECT count(*) FROM a) AS a, (SELECT count(*) FROM v) AS v,
                   (SELECT count(*) FROM od) AS od) AS c
     WHERE namespace = $1 AND partition = $2 AND EXISTS (SELECT 1 FROM ok)
    RETURNING 1
  )
  SELECT p.epoch, p.frontier, p.config_revision, coalesce(p.claim = $51::uuid, false) AS own_claim,
         (SELECT count(*) FROM w)::int AS committed, (SELECT stale FROM fresh) AS stale,
         (SELECT count(*) FROM (SELECT pg_notify('${outboxChannel}', $1) FROM w WHERE $35::bool) AS n)::int AS notified
    FROM (SELECT 1) AS one LEFT JOIN p ON true`;

export interface CommitRow extends EpochFrontierRow {
  /** The partition row's revision (null without a row). */
  config_revision: number | null;
  /** Whether the row holds the claim the batch was sent under. */
  own_claim: boolean;
  committed: number;
  /** Transactions taken as new that are stored: nothing was written. */
  stale: number;
  notified: number;
}
