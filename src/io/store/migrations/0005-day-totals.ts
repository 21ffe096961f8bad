import type { Migration } from './migration.js';

/**
 * Each day row keeps its day's total: the sum (`qty`) and count (`posts`) of the
 * authoritative posts on that day (docs/design.md#output-versions). With them a batch reads only its window
 * (domain/key-window.ts): the authority of its own transactions and the days from the
 * earliest one it touches, instead of every transaction of its keys to rebuild the totals
 * (1,362 ms for one record with 100,000 transactions behind it).
 *
 * Existing namespaces are converted in place: the totals are summed once from `authority`,
 * then checked against the rule that holds between decisions: a day has posts exactly when
 * its latest version is shown (not retracted). A database that breaks it is refused, the
 * whole migration rolled back, nothing changed.
 *
 * `output_days_shown` finds the last shown day before a batch's earliest day (the closing
 * carried into it) by one index step, however many retracted days lie in between.
 */
export const dayTotalsMigration: Migration = {
  version: 5,
  name: 'day_totals',
  // Summing a large ledger's authority once may take longer than a normal statement.
  statementTimeoutMs: 3_600_000,
  sql: `
    ALTER TABLE output_days
      ADD COLUMN qty   bigint  NOT NULL DEFAULT 0,
      ADD COLUMN posts integer NOT NULL DEFAULT 0;

    UPDATE output_days o
       SET qty = t.qty, posts = t.posts
      FROM (SELECT namespace, item, location, day, sum(qty)::bigint AS qty, count(*)::integer AS posts
              FROM authority WHERE op = 'post'
             GROUP BY namespace, item, location, day) AS t
     WHERE o.namespace = t.namespace AND o.item = t.item AND o.location = t.location AND o.day = t.day;

    SELECT amends_assert(NOT EXISTS (
             SELECT 1 FROM authority a
              WHERE a.op = 'post' AND NOT EXISTS (
                    SELECT 1 FROM output_days o
                     WHERE o.namespace = a.namespace AND o.item = a.item AND o.location = a.location
                       AND o.day = a.day)),
           'an authoritative post on a day without a day row');

    ALTER TABLE output_days
      ADD CONSTRAINT output_days_totals CHECK (
        posts >= 0 AND (posts > 0 OR qty = 0) AND (posts > 0) = (NOT retracted));

    CREATE INDEX output_days_shown ON output_days (namespace, item, location, day) WHERE NOT retracted;
  `,
};
