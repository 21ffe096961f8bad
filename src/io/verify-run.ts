/**
 * The bounded verifier (verification.md, "Bounded verifier"), as a function that returns the
 * report, so that `amendsctl verify` and the showcase run the same thing:
 *
 *   guard → revalidate the source (and the output binding) → fix the bound (read-committed
 *   ends) → read the source [0, end) → oracle → one store snapshot (frontiers, decisions,
 *   quarantine, outputs, outbox, view) → the output topic [0, end) → compare → report
 *
 * The producer guard is held from before the source is observed until the report is made, so
 * no `source-load` publishes while the source is read and compared. Workers, relay and view
 * may keep running: the store is read in one REPEATABLE READ snapshot, and everything found
 * is judged against the oracle, so progress made meanwhile is "not drained yet", never a
 * false difference (verify-comparison.ts). Worker state is never read to derive the truth:
 * the oracle sees only the source records.
 *
 * Anything that prevents the comparison (guard still held after the wait, an invalid source
 * or binding, an unreachable broker or database) throws a one-line AmendsError (exit 1).
 */
import { operationalError } from '../domain/amends-error.js';
import type { Manifest } from '../domain/config.js';
import { runOracle } from '../domain/oracle.js';
import type { SourceRecord } from '../domain/source-record.js';
import { VerifyComparison } from '../domain/verify-comparison.js';
import type { VerifyDocument } from '../domain/verify-document.js';
import { type BoundedReadOptions, readTopicUpTo, type TopicRecord } from './bounded-topic-reader.js';
import { readDecisions, readOutbox, readOutputVersions, readQuarantine } from './export-queries.js';
import { KafkaAdmin } from './kafka-admin.js';
import { KafkaSourceObserver } from './kafka-source-observer.js';
import { registerNamespace } from './namespace-registry.js';
import { checkLiveBinding, type OutputBinding, readBinding } from './output-binding.js';
import { readViewPartitions, readViewRows } from './output-view.js';
import { withPooledClient } from './pooled-client.js';
import { Database, describeDatabaseError, type Queryable } from './postgres.js';
import { describeHolder, ProducerGuard } from './producer-guard.js';
import { int8ToSafeInteger } from './safe-integer.js';

/** verification.md: verify waits for the guard, by default 60 s. */
export const defaultGuardWaitMs = 60_000;

export interface VerifyOptions {
  manifest: Manifest;
  databaseUrl: string;
  brokers: string;
  /** How long to wait for the producer guard (an active load finishes first). */
  guardWaitMs?: number;
  /** Names the sessions and clients, e.g. `amendsctl verify pid 123`. */
  applicationName?: string;
  /** Source offsets covered so far of the sum of the bound, after every poll. */
  onSourceProgress?: (covered: number, total: number) => void;
  /** Runs once the guard is held, before the source is observed (the tests' pause point). */
  afterGuard?: () => Promise<void>;
}

export async function runVerify(options: VerifyOptions): Promise<VerifyDocument> {
  const { manifest, databaseUrl } = options;
  const { namespace, source_incarnation: incarnation } = manifest.config;
  const applicationName = options.applicationName ?? `amends verify pid ${process.pid}`;
  const waitMs = options.guardWaitMs ?? defaultGuardWaitMs;
  const db = await Database.open(databaseUrl, applicationName);
  try {
    await registerNamespace(db.pool, manifest).catch((error: unknown) => {
      throw describeDatabaseError(error, databaseUrl, `registering namespace ${namespace}`);
    });
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

    const records: SourceRecord[] = [];
    const reader = { brokers, clientId, groupId: `amends.${namespace}.verify` };
    await readBounded(
      { ...reader, topic: manifest.source_topic, ends },
      (batch) => records.push(...batch),
      options.onSourceProgress,
    );
    // The source must still be the one bounded: a topic recreated or truncated meanwhile is
    // another history, so nothing read is trusted.
    await observeSource(observer, manifest);
    const oracle = runOracle(manifest.config, records);

    const comparison = await compareStoreSnapshot(
      db,
      databaseUrl,
      namespace,
      binding,
      (frontiers) =>
        new VerifyComparison({
          config: manifest.config,
          records,
          oracle,
          ends,
          frontiers,
          bound: binding !== undefined,
        }),
    );
    if (binding) await compareOutputTopic(admin, binding, comparison, reader);
    guard.assertHeld();
    return comparison.finish();
  } finally {
    admin.close();
    await observer.close();
  }
}

/** Steps 2 and 3: the source is still valid (worker.md §2); its read-committed ends are the bound. */
async function observeSource(observer: KafkaSourceObserver, manifest: Manifest): Promise<Map<number, number>> {
  const all = Array.from({ length: manifest.config.partitions }, (_, p) => p);
  const observation = await observer.observe(all, AbortSignal.timeout(30_000));
  if (!observation.valid) {
    throw operationalError(`cannot verify source ${manifest.source_topic}: ${observation.detail}`);
  }
  return new Map(observation.bounds.map((b) => [b.partition, b.readCommittedEnd]));
}

/**
 * One REPEATABLE READ snapshot of everything the store holds for the namespace, streamed into
 * the comparison page by page. The frontiers come first: they fix the snapshot and say what
 * the rest should contain.
 */
async function compareStoreSnapshot(
  db: Database,
  databaseUrl: string,
  namespace: string,
  binding: OutputBinding | undefined,
  compareWith: (frontiers: Map<number, number>) => VerifyComparison,
): Promise<VerifyComparison> {
  let connected = false;
  try {
    return await withPooledClient(db.pool, async (client) => {
      connected = true;
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const comparison = compareWith(await readFrontiers(client, namespace));
        for await (const d of readDecisions(client, namespace)) comparison.decision(d);
        for await (const q of readQuarantine(client, namespace)) comparison.quarantined(q);
        for await (const v of readOutputVersions(client, namespace)) comparison.outputVersion(v);
        for await (const e of readOutbox(client, namespace)) comparison.outboxRow(e);
        if (binding) {
          const view = await readViewPartitions(client, namespace);
          comparison.viewPartitions(new Map(view.map((p) => [p.partition, p.frontier])));
          for await (const row of readViewRows(client, namespace)) comparison.viewRow(row);
        }
        await client.query('COMMIT');
        return comparison;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw describeDatabaseError(error, databaseUrl, `reading the store of namespace ${namespace}`);
      }
    });
  } catch (error) {
    throw connected ? error : describeDatabaseError(error, databaseUrl, 'connecting');
  }
}

async function readFrontiers(db: Queryable, namespace: string): Promise<Map<number, number>> {
  const result = await db.query<{ partition: number; frontier: string }>(
    'SELECT partition, frontier FROM partitions WHERE namespace = $1',
    [namespace],
  );
  return new Map(result.rows.map((r) => [r.partition, int8ToSafeInteger(r.frontier, 'frontier')]));
}

/** Step 5, output topic: its end read after the snapshot, so every envelope marked published lies below it. */
async function compareOutputTopic(
  admin: KafkaAdmin,
  binding: OutputBinding,
  comparison: VerifyComparison,
  reader: Omit<BoundedReadOptions, 'topic' | 'ends'>,
): Promise<void> {
  const all = Array.from({ length: binding.partitions }, (_, p) => p);
  const ends = await admin.listOffsets(binding.outputTopic, all, 'read-committed-end');
  comparison.outputTopicEnds(ends);
  await readBounded({ ...reader, topic: binding.outputTopic, ends }, (batch) => {
    for (const record of batch) comparison.topicRecord(record);
  });
}

/** Every record of the topic in [0, end), batch by batch. */
async function readBounded(
  options: BoundedReadOptions,
  take: (batch: TopicRecord[]) => void,
  onProgress?: (covered: number, total: number) => void,
): Promise<void> {
  for await (const batch of readTopicUpTo({ ...options, ...(onProgress ? { onProgress } : {}) })) take(batch);
}
