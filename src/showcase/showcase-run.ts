/**
 * The showcase's six steps (docs/design.md#showcase), on fresh topics and a fresh
 * namespace, with two stock keys on two partitions and a filler load on both:
 *
 *   1. source + output topics; two workers (each behind a PostgreSQL fault proxy of ours), a
 *      relay and a view as child processes (showcase-start.ts);
 *   2. before.jsonl + filler + correction.jsonl: the owner of partition 0 pauses right before
 *      the store call whose batch holds the correction (T2 rev 2) and is SIGKILLed there, then
 *      restarted with the same --instance-id (showcase-sigkill.ts);
 *   3. filler: the owner of partition 1 stops (SIGSTOP) after a poll, before its store
 *      transaction, until the group has handed the partition to the other worker (new epoch);
 *      then SIGCONT: its late process call must be fenced and write nothing (showcase-sigstop.ts);
 *   4. filler: the fault proxy of a processing worker drops one COMMIT reply (the statement
 *      committed; the reply never arrives): the worker resolves it by re-observation
 *      (showcase-commit-reply.ts);
 *   5. filler: a relay with the owned fault point exits after publish and before mark; the
 *      next relay publishes those versions again and the view ignores the duplicates
 *      (showcase-relay-duplicate.ts);
 *   6. cancel-last-day.jsonl, drain, `amendsctl verify --json` (showcase-verdict.ts).
 *
 * Faults are placed by owned hooks (worker-fault-hooks.ts, the relay's AMENDS_FAULT, our
 * proxy), never by lucky timing; every recovery is read back from the children's logs and
 * the database, never assumed. The steps share one ShowcaseContext (showcase-context.ts).
 */
import { resolve } from 'node:path';
import { kafkaClientSettings } from '../io/kafka/client-settings.js';
import { withKafkaAdmin } from '../io/kafka/kafka-admin.js';
import { Database } from '../io/store/postgres.js';
import type { PgFaultProxy } from './pg-fault-proxy.js';
import { dropCommitReply } from './showcase-commit-reply.js';
import type { ShowcaseOutcome, ShowcaseSetup } from './showcase-context.js';
import { ShowcaseProcesses } from './showcase-processes.js';
import { relayDiesAfterPublish } from './showcase-relay-duplicate.js';
import { killWhileDecidingCorrection } from './showcase-sigkill.js';
import { stopPastSessionTimeout } from './showcase-sigstop.js';
import { startShowcase } from './showcase-start.js';
import { drainAndVerify } from './showcase-verdict.js';

export type { ShowcaseOutcome, ShowcaseSetup } from './showcase-context.js';

export async function runShowcase(setup: ShowcaseSetup): Promise<ShowcaseOutcome> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AMENDS_DATABASE_URL: setup.databaseUrl,
    AMENDS_BROKERS: setup.brokers,
    // The faults are read from the children's lines of each store attempt: debug lines.
    AMENDS_LOG_LEVEL: 'debug',
    // The children reach the cluster as this process does (--kafka-config or the variable).
    ...kafkaConfigEnv(),
  };
  const children = new ShowcaseProcesses(setup.runDir, env, setup.signal);
  const proxies: PgFaultProxy[] = [];
  const db = await Database.open(setup.databaseUrl, `amendsctl showcase ${setup.runId}`);
  try {
    return await withKafkaAdmin(setup.brokers, `amendsctl-showcase-${setup.runId}`, async (admin) => {
      const run = await startShowcase({ setup, env, children, proxies, db: db.pool, admin });
      await killWhileDecidingCorrection(run);
      await stopPastSessionTimeout(run);
      await dropCommitReply(run);
      await relayDiesAfterPublish(run);
      return await drainAndVerify(run);
    });
  } finally {
    setup.children.push(...(await children.stopAll()));
    await Promise.all(proxies.map((p) => p.close()));
    await db.close();
  }
}

/** AMENDS_KAFKA_CONFIG for child processes: the installed settings' file, as an absolute path. */
function kafkaConfigEnv(): NodeJS.ProcessEnv {
  const file = kafkaClientSettings().file;
  return file === null ? {} : { AMENDS_KAFKA_CONFIG: resolve(file) };
}
