/**
 * The bounded verifier (docs/design.md#bounded-verifier), as a function that returns the
 * report, so that `amendsctl verify` and the showcase run the same thing:
 *
 *   guard → revalidate the source (and the output binding) → fix the bound (read-committed
 *   ends) → open one store snapshot, frontiers first → per source partition, its records
 *   [0, end) through the oracle merged with its decision rows (phase "source") → the source
 *   observed again → output versions and outbox (phase "store") → the output topic [0, end)
 *   (phase "topic") → the view (phase "view") → report, with `stats`
 *
 * Every stream is read in bounded chunks (the source 1,000 records per poll, the store by
 * keyset pages on its indexes) and compared as it comes (verify-comparison.ts), so memory
 * holds the oracle's state and its versions (version-ledger.ts), never the records.
 *
 * The producer guard is held from before the source is observed until the report is made, so
 * no `source-load` publishes while the source is read and compared. Workers, relay and view
 * may keep running: the store is read in one REPEATABLE READ snapshot, and everything found
 * is judged against the oracle, so progress made meanwhile is "not drained yet", never a
 * false difference. Worker state is never read to derive the truth: the oracle sees only the
 * source records.
 *
 * Anything that prevents the comparison (guard still held after the wait, an invalid source
 * or binding, an unreachable broker or database) throws a one-line AmendsError (exit 1).
 */

import type { Manifest } from '../domain/config.js';
import { KafkaAdmin } from '../io/kafka/kafka-admin.js';
import { KafkaSourceObserver } from '../io/kafka/kafka-source-observer.js';
import { sourceObservationBudgetMs } from '../io/kafka/kafka-timeouts.js';
import { namespaceId } from '../io/store/namespace-registry.js';
import { withPooledClient } from '../io/store/pooled-client.js';
import { type Database, describeDatabaseError, type Queryable } from '../io/store/postgres.js';
import { describeHolder, ProducerGuard } from '../io/store/producer-guard.js';
import { openRegisteredNamespace } from '../io/store/read-only-namespace.js';
import { readRevisions } from '../io/store/revision-registry.js';
import { checkLiveBinding, readBinding } from '../io/transport/output-binding.js';
import { readViewPartitions, readViewRows } from '../io/transport/view-queries.js';
import { operationalError } from '../kernel/amends-error.js';
import { int8ToSafeInteger } from '../kernel/safe-integer.js';
import { BoundedTopicReader, readTopicUpTo, type TopicReaderOptions } from './bounded-topic-reader.js';
import { keyOrderReadsSql, readVersionsWithEnvelopes } from './export-queries.js';
import { patientReads, statementTimeoutOf } from './patient-reads.js';
import { StoreDecisionPages } from './store-decision-pages.js';
import { VerifyComparison } from './verify-comparison.js';
import type { VerifyDocument } from './verify-document.js';
import { PhaseClock, type VerifyPhase } from './verify-stats.js';

/** docs/design.md#verification: verify waits for the guard, by default 60 s. */
export const defaultGuardWaitMs = 60_000;

/** Store and view rows per keyset page (a version's row carries its envelope's bytes, ~300). */
const storePageRows = 2_000;
/** How long the store snapshot may sit idle while a topic is read (a 2,000,000-record topic: about a minute). */
const snapshotIdleMaxMs = 600_000;
/** How often the store and view phases report progress, in rows. */
const progressEveryRows = 5_000;

export interface VerifyOptions {
  manifest: Manifest;
  databaseUrl: string;
  brokers: string;
  /** How long to wait for the producer guard (an active load finishes first). */
  guardWaitMs?: number;
  /** Names the sessions and clients, e.g. `amendsctl verify pid 123`. */
  applicationName?: string;
  /** How far the phase has got (source: offsets of the bound; store, topic, view: rows). */
  onProgress?: (phase: VerifyPhase, done: number, total: number) => void;
  /** Runs once the guard is held, before the source is observed (the tests' pause point). */
  afterGuard?: () => Promise<void>;
}

export async function runVerify(options: VerifyOptions): Promise<VerifyDocument> {
  const { manifest, databaseUrl } = options;
  const { source_incarnation: incarnation } = manifest.config;
  const applicationName = options.applicationName ?? `amends verify pid ${process.pid}`;
  const waitMs = options.guardWaitMs ?? defaultGuardWaitMs;
  // Read-only sessions, no migration, no registration (the read role runs verify): a
  // namespace nothing has registered has nothing to compare and is refused as inspect does.
  const db = await openRegisteredNamespace(databaseUrl, manifest, 'amendsctl verify', applicationName);
  try {
    const guard = await ProducerGuard.open(databaseUrl, incarnation, `${applicationName} guard`);
    try {
      const attempt = await guard.acquire(waitMs);
      if (!attempt.acquired) {
        throw operationalError(
          `the producer guard of source ${incarnation} is still held by ${describeHolder(attempt.holder)} after waiting ${waitMs / 1000} s: a load is running; nothing was compared, try again when it has finished (or wait longer with --wait)`,
        );
      }
      await options.afterGuard?.();
      return await verifyUnderGuard(db, guard, options, applicationName);
    } finally {
      await guard.release();
    }
  } finally {
    await db.close();
  }
}

async function verifyUnderGuard(
  db: Database,
  guard: ProducerGuard,
  options: VerifyOptions,
  applicationName: string,
): Promise<VerifyDocument> {
  const { manifest, brokers, databaseUrl } = options;
  const { namespace, partitions } = manifest.config;
  const clientId = applicationName.replace(/[^A-Za-z0-9._-]+/g, '-');
  const observer = await KafkaSourceObserver.open({
    brokers,
    topic: manifest.source_topic,
    incarnation: manifest.config.source_incarnation,
    partitions,
    clientId,
  });
  const admin = KafkaAdmin.open(brokers, clientId);
  try {
    const ends = await observeSource(observer, manifest);
    const binding = await readBinding(db.pool, namespace).catch((error: unknown) => {
      throw describeDatabaseError(error, databaseUrl, `reading the output binding of namespace ${namespace}`);
    });
    if (binding) await checkLiveBinding(admin, binding);
    const run: Run = {
      options,
      clock: new PhaseClock(),
      reader: { brokers, clientId, groupId: `amends.${namespace}.verify` },
      ends,
      outputTopic: binding?.outputTopic,
      outputPartitions: binding?.partitions ?? 0,
      admin,
    };
    const report = await inSnapshot(db, databaseUrl, namespace, (client) =>
      compareAll(client, run, () => observeSource(observer, manifest)),
    );
    guard.assertHeld();
    return report;
  } finally {
    admin.close();
    await observer.close();
  }
}

interface Run {
  options: VerifyOptions;
  clock: PhaseClock;
  reader: Omit<TopicReaderOptions, 'topic'>;
  ends: Map<number, number>;
  outputTopic: string | undefined;
  outputPartitions: number;
  admin: KafkaAdmin;
}

/** Every phase inside one REPEATABLE READ snapshot: the frontiers fix it and say what the rest should hold. */
async function compareAll(client: Queryable, run: Run, reobserve: () => Promise<unknown>): Promise<VerifyDocument> {
  const { manifest, onProgress } = run.options;
  const { namespace } = manifest.config;
  const nsId = await namespaceId(client, namespace);
  const comparison = new VerifyComparison({
    config: manifest.config,
    revisions: await readRevisions(client, manifest.config),
    ends: run.ends,
    frontiers: await readFrontiers(client, namespace),
    bound: run.outputTopic !== undefined,
  });
  await run.clock.time('source', () => compareSource(client, nsId, comparison, run));
  comparison.sourceRead();
  // The source must still be the one bounded: a topic recreated or truncated meanwhile is
  // another history, so nothing read is trusted.
  await reobserve();
  await run.clock.time('store', async () => {
    const total = 2 * comparison.ledger.versionCount;
    let done = 0;
    const tick = () => {
      done += 1;
      if (done % progressEveryRows === 0) onProgress?.('store', done, total);
    };
    for await (const { version, envelope } of readVersionsWithEnvelopes(client, namespace, storePageRows)) {
      comparison.outputVersion(version);
      tick();
      comparison.outboxRow(envelope);
      tick();
    }
  });
  if (run.outputTopic !== undefined) {
    const outputTopic = run.outputTopic;
    await run.clock.time('topic', () => compareOutputTopic(outputTopic, comparison, run));
    await run.clock.time('view', async () => {
      const view = await readViewPartitions(client, namespace);
      comparison.viewPartitions(new Map(view.map((p) => [p.partition, p.frontier])));
      let done = 0;
      for await (const row of readViewRows(client, namespace, storePageRows)) {
        comparison.viewRow(row);
        if (++done % progressEveryRows === 0) onProgress?.('view', done, comparison.ledger.dayCount);
      }
    });
  }
  const report = comparison.finish();
  return { ...report, stats: run.clock.stats(report.counts.records) };
}

/** Phase "source": per partition, its records in [0, end) merged with its decision rows. */
async function compareSource(client: Queryable, nsId: number, comparison: VerifyComparison, run: Run): Promise<void> {
  const total = [...run.ends.values()].reduce((a, b) => a + b, 0);
  const reader = new BoundedTopicReader({ ...run.reader, topic: run.options.manifest.source_topic });
  try {
    await comparePartitions(client, nsId, comparison, run, reader, total);
  } finally {
    await reader.close();
  }
  // Rows of a partition past the source's count can only be wrong; the primary key finds them.
  const beyond = Math.max(-1, ...run.ends.keys()) + 1;
  for (let partition = beyond; await hasDecisionsFrom(client, nsId, partition); partition++) {
    const pages = new StoreDecisionPages(client, nsId, partition);
    for (let page = await pages.next(); page.length > 0; page = await pages.next()) {
      for (const row of page) comparison.strayDecision(row);
    }
  }
}

/** Each source partition in turn, through one consumer, merged with its decision rows. */
async function comparePartitions(
  client: Queryable,
  nsId: number,
  comparison: VerifyComparison,
  run: Run,
  reader: BoundedTopicReader,
  total: number,
): Promise<void> {
  let before = 0;
  for (const [partition, end] of [...run.ends].sort(([a], [b]) => a - b)) {
    const pages = new StoreDecisionPages(client, nsId, partition);
    const feedStore = async () => {
      const page = await pages.next();
      for (const row of page) comparison.storedDecision(row);
      return page.length > 0;
    };
    comparison.startPartition(partition);
    const at = before;
    const progress = (covered: number) => run.options.onProgress?.('source', at + covered, total);
    for await (const batch of reader.read(new Map([[partition, end]]), progress)) {
      for (const record of batch) comparison.sourceRecord(record);
      while (comparison.needsStoredDecisions()) if (!(await feedStore())) comparison.storeEnded(partition);
    }
    comparison.sourceEnded(partition);
    while (await feedStore()) {}
    comparison.endPartition(partition);
    before += end;
  }
}

async function hasDecisionsFrom(client: Queryable, nsId: number, partition: number): Promise<boolean> {
  const r = await client.query('SELECT 1 FROM decisions WHERE ns = $1 AND partition >= $2 LIMIT 1', [nsId, partition]);
  return (r.rowCount ?? 0) > 0;
}

async function inSnapshot<T>(
  db: Database,
  databaseUrl: string,
  namespace: string,
  read: (client: Queryable) => Promise<T>,
): Promise<T> {
  const connectFailure = (error: unknown) => describeDatabaseError(error, databaseUrl, 'connecting');
  const doing = `reading the store of namespace ${namespace}`;
  // Through withPooledClient: a connection that dies mid-snapshot fails the statement, never
  // the process (pooled-client.ts).
  return withPooledClient(
    db.pool,
    async (client) => {
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        // The snapshot stays open, idle, while a topic is read (postgres.ts allows 10 s idle).
        await client.query(`SET LOCAL idle_in_transaction_session_timeout = ${snapshotIdleMaxMs}`);
        await client.query(keyOrderReadsSql);
        // Every read of the snapshot may wait out a statement or lock timeout (patient-reads.ts).
        const timeoutMs = await statementTimeoutOf(client);
        const result = await read(patientReads(client, timeoutMs, doing));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw describeDatabaseError(error, databaseUrl, doing);
      }
    },
    connectFailure,
  );
}

/**
 * Steps 2 and 3: the source is still valid (docs/design.md#source-validation); its read-committed
 * ends are the bound.
 */
async function observeSource(observer: KafkaSourceObserver, manifest: Manifest): Promise<Map<number, number>> {
  const all = Array.from({ length: manifest.config.partitions }, (_, p) => p);
  const observation = await observer.observe(all, AbortSignal.timeout(sourceObservationBudgetMs));
  if (!observation.valid) {
    throw operationalError(`cannot verify source ${manifest.source_topic}: ${observation.detail}`);
  }
  return new Map(observation.bounds.map((b) => [b.partition, b.readCommittedEnd]));
}

async function readFrontiers(db: Queryable, namespace: string): Promise<Map<number, number>> {
  const result = await db.query<{ partition: number; frontier: string }>(
    'SELECT partition, frontier FROM partitions WHERE namespace = $1',
    [namespace],
  );
  return new Map(result.rows.map((r) => [r.partition, int8ToSafeInteger(r.frontier, 'frontier')]));
}

/** Phase "topic": its end read after the snapshot began, so every envelope marked published lies below it. */
async function compareOutputTopic(outputTopic: string, comparison: VerifyComparison, run: Run): Promise<void> {
  const all = Array.from({ length: run.outputPartitions }, (_, p) => p);
  const ends = await run.admin.listOffsets(outputTopic, all, 'read-committed-end');
  comparison.outputTopicEnds(ends);
  for await (const batch of readTopicUpTo({
    ...run.reader,
    topic: outputTopic,
    ends,
    onProgress: (covered, total) => run.options.onProgress?.('topic', covered, total),
  })) {
    for (const record of batch) comparison.topicRecord(record);
  }
}
