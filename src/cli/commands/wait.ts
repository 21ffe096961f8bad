/**
 * `amendsctl wait --manifest M --drained [--timeout S] [--json]`: returns once the namespace is
 * drained (drain-observation.ts: every source partition decided up to its read-committed end,
 * the outbox relayed and the view at the output topic's end when the namespace is bound), or
 * exits 1 at the timeout naming what is still behind. Read-only, like inspect: it registers
 * and migrates nothing (read-only-namespace.ts).
 *
 * A scripted walk-through needs it (README): a worker started in the background has not
 * decided anything yet when the next line exports. An outage of the broker or the database
 * while waiting is waited out within the timeout; a topic that is not the namespace's
 * (missing, recreated, repartitioned) can never drain, so it ends the wait at once.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { Manifest } from '../../domain/config.js';
import { KafkaAdmin } from '../../io/kafka/kafka-admin.js';
import { commandObservationTimeouts } from '../../io/kafka/topic-ends-observation.js';
import { Database, databaseUrlFrom, describeDatabaseError } from '../../io/store/postgres.js';
import { type DrainObservation, isLastingMismatch, observeDrain } from '../../io/transport/drain-observation.js';
import { operationalError, usageError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { type CommandIo, defineCommand } from '../command.js';
import { isDependencyOutage } from '../dependency-outage.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { readManifestFile } from '../input-files.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
import { createProgress, type Progress } from '../progress-bar.js';

const defaultTimeoutS = 300;
const timeoutMaxS = 86_400;
/** How often the chain is read again: its reads are a few rows and two offset listings. */
const pollMs = 500;

export const waitCommand = defineCommand({
  name: 'wait',
  summary: 'wait until a namespace is drained: decided, relayed and viewed up to the ends',
  help: `wait --manifest M --drained [--timeout ${defaultTimeoutS}] [--json]

  Waits until the namespace is drained: every source partition decided up to its
  read-committed end, and, once output-create has bound the namespace, every output
  version published by the relay and the view at the output topic's end (what verify
  calls drained). Exit 0 then, with one line (or --json's document) on stdout; exit 1
  at the timeout with one line naming what is still behind, e.g.
  "decide: 7 records to decide (partition 1 at 3 of 10)". The ends are read anew on each
  look, so records published meanwhile are waited for too; a worker, relay or view that
  is not running yet (or a namespace no worker has registered yet) is simply waited for;
  a source or output topic that is missing or was recreated ends the wait at once.
  Shows progress on a terminal. Only reads. Needs AMENDS_DATABASE_URL.

  Flags
    --manifest M   the namespace's manifest (required)
    --drained      wait until the namespace is drained (required: the condition to wait for)
    --timeout S    seconds to wait at most (default ${defaultTimeoutS}, at most ${timeoutMaxS})
    --json         one JSON document: drained, behind, remaining, source, partitions, relay, view
${kafkaFlagsHelp(15)}

  Example
    $ amends worker --manifest manifest.json &
    $ amendsctl wait --manifest manifest.json --drained --timeout 60
    $ amendsctl export --manifest manifest.json --what outputs`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    drained: { type: 'boolean', default: false },
    timeout: { type: 'number', default: defaultTimeoutS },
    json: { type: 'boolean', default: false },
    ...kafkaFlags,
  },
  async run(cli, io) {
    const { timeout, json, drained } = cli.flags;
    refuseArguments(cli.input);
    if (!drained) throw usageError('--drained is required: it names what to wait for (the only condition so far)');
    if (!Number.isFinite(timeout) || timeout < 0 || timeout > timeoutMaxS) {
      throw usageError(`--timeout must be a number of seconds in [0, ${timeoutMaxS}]`);
    }
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    const manifest = await readManifestFile(cli.flags.manifest as string);
    // Read-only sessions, as inspect's; the namespace may be registered while it waits.
    const db = await Database.openReadOnly(databaseUrl, `amendsctl wait pid ${process.pid}`);
    const admin = KafkaAdmin.open(brokers, `amendsctl-wait-${process.pid}`);
    const progress = new DrainProgress(io);
    const began = Date.now();
    let last: Look;
    try {
      const look = () => lookOnce(db.pool, admin, manifest, databaseUrl);
      last = await pollDrain(manifest.config.namespace, look, Date.now() + timeout * 1000, progress);
    } finally {
      progress.stop();
      admin.close();
      await db.close();
    }
    const elapsedS = Math.round((Date.now() - began) / 100) / 10;
    if (json) io.stdout.write(`${JSON.stringify(waitDocument(manifest, last.observation, elapsedS))}\n`);
    if (!last.observation.drained) {
      throw operationalError(
        `namespace ${manifest.config.namespace} is not drained after ${timeout} s: ${last.why}; see amendsctl inspect --manifest ${cli.flags.manifest}`,
      );
    }
    if (!json) io.stdout.write(`${drainedLine(manifest, last.observation)} (${elapsedS} s)\n`);
    return exitCodes.ok;
  },
});

/** One look: the observation, or why there is none this time (an outage, waited out). */
interface Look {
  observation: DrainObservation;
  why: string;
}

async function lookOnce(
  db: Parameters<typeof observeDrain>[0],
  admin: KafkaAdmin,
  manifest: Manifest,
  databaseUrl: string,
): Promise<Look | { outage: string }> {
  try {
    const observation = await observeDrain(db, admin, manifest, commandObservationTimeouts);
    return { observation, why: observation.behind.join('; ') };
  } catch (error) {
    const described = describeDatabaseError(error, databaseUrl, `reading namespace ${manifest.config.namespace}`);
    if (isDependencyOutage(error)) return { outage: errorMessage(described) };
    throw described;
  }
}

/** Looks until drained or past the deadline (at least one look); fails at once on a lasting mismatch. */
async function pollDrain(
  namespace: string,
  look: () => Promise<Look | { outage: string }>,
  deadline: number,
  progress: DrainProgress,
): Promise<Look> {
  let last: Look | undefined;
  let outage: string | undefined;
  for (;;) {
    const seen = await look();
    if ('outage' in seen) {
      outage = seen.outage;
    } else {
      last = seen;
      outage = undefined;
      const { source, view } = seen.observation;
      const lasting = [source, view?.output].find((t) => t !== undefined && isLastingMismatch(t));
      if (lasting !== undefined) throw operationalError(`namespace ${namespace} can never drain: ${lasting.detail}`);
      progress.show(seen.observation);
      if (seen.observation.drained) return seen;
    }
    if (Date.now() >= deadline) {
      if (last === undefined) throw operationalError(`namespace ${namespace}: no look succeeded: ${outage}`);
      return outage === undefined ? last : { ...last, why: `${outage}; last seen: ${last.why}` };
    }
    await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
  }
}

/**
 * The bar counts records: what is left to decide, relay and view. Records arrive while it
 * waits, so the total grows with them; the bar never moves back. It appears only once there
 * is something to wait for (a namespace drained at the first look shows none).
 */
class DrainProgress {
  private bar: Progress | undefined;
  private done = 0;
  private total = 0;

  constructor(private readonly io: CommandIo) {}

  show(observation: DrainObservation): void {
    const { decide, relay, view } = observation.remaining;
    const left = decide + relay + view;
    if (this.bar === undefined) {
      if (left === 0) return;
      this.bar = createProgress(this.io, left, 'drain', 'records');
      this.total = left;
    }
    this.done = Math.max(this.done, this.total - left);
    this.total = this.done + left;
    this.bar.setTotal(this.total);
    this.bar.update(this.done);
  }

  stop(): void {
    this.bar?.stop();
  }
}

/** --json: the verdict and what is behind first, then the positions they come from. */
function waitDocument(manifest: Manifest, o: DrainObservation, elapsedS: number) {
  return {
    namespace: manifest.config.namespace,
    drained: o.drained,
    behind: o.behind,
    remaining: o.remaining,
    elapsed_s: elapsedS,
    source: o.source,
    partitions: o.partitions,
    relay: o.relay,
    view: o.view,
  };
}

function drainedLine(manifest: Manifest, o: DrainObservation): string {
  const records = o.partitions.reduce((sum, p) => sum + p.frontier, 0);
  const chain = o.view === null ? 'no output binding' : `outbox relayed, view at the end of ${o.view.output_topic}`;
  return `namespace ${manifest.config.namespace} drained: ${o.partitions.length} partitions decided to their ends (${records} records), ${chain}`;
}
