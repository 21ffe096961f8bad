/**
 * `amendsctl source-load --manifest M --file F [--delivery-timeout-ms 30000] [--brokers B]`
 * (docs/design.md#commands, #producer-guard).
 *
 * Order, each step before the next:
 *  1. AMENDS_DATABASE_URL must be set (one line, exit 1, before anything is read);
 *  2. the manifest and the *whole* file are read and validated: an invalid line names its
 *     number and nothing is published;
 *  3. the live topic is checked against the manifest (UUID, partition count), and every
 *     encoded record against the size the topic and the producer accept
 *     (record-size-limit.ts): an oversized line names its number, nothing is published;
 *  4. the namespace is registered (migrations are applied on first use);
 *  5. the producer guard of the source incarnation is taken, or the load is refused
 *     naming its holder; it is held until the producer has fully disconnected;
 *  6. lines are published in file order to their mapped partitions with an idempotent
 *     producer; `line N -> partition P offset O` is printed per line, in file order.
 * A failed or unknown publication exits 1 naming the line; rerunning may redeliver
 * identical revisions, which the worker decides as DUPLICATE.
 */

import type { Manifest } from '../../domain/config.js';
import { newestConfigOf } from '../../domain/config-revision.js';
import { type EncodedFixtureLine, encodeFixtureFile } from '../../domain/fixture-line.js';
import { kafkaClientCloseTimeoutMs } from '../../io/kafka/kafka-timeouts.js';
import { checkLiveSourceTopic } from '../../io/kafka/live-source-topic.js';
import { readRecordSizeLimit, refuseOversizedRecords } from '../../io/kafka/record-size-limit.js';
import { type Delivery, PublicationError, type QueuedRecord, SourceProducer } from '../../io/kafka/source-producer.js';
import { retryOutages } from '../../io/process/ride-through.js';
import { registerNamespace } from '../../io/store/namespace-registry.js';
import { Database, databaseUrlFrom, describeDatabaseError } from '../../io/store/postgres.js';
import { describeHolder, ProducerGuard } from '../../io/store/producer-guard.js';
import { invalidInput, operationalError, usageError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { type CommandIo, defineCommand } from '../command.js';
import { isDependencyOutage } from '../dependency-outage.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { inputName, readInputText, readManifestFile } from '../input-files.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
import { createProgress, type Progress } from '../progress-bar.js';

const defaultDeliveryTimeoutMs = 30_000;
const deliveryTimeoutMaxMs = 600_000;
/** At most this many records queued and unacknowledged at once (memory and timer bound). */
const inFlightMax = 10_000;

export type LineOutcome = { delivered: Delivery } | { error: PublicationError };

export const sourceLoadCommand = defineCommand({
  name: 'source-load',
  summary: 'validate a fixture file, then publish it to the source topic',
  help: `source-load --manifest M --file F [--delivery-timeout-ms ${defaultDeliveryTimeoutMs}]

  Validates every line of F first ({"key":{item,location},"value":{…}}, the key a
  stock key of M's newest revision (config-revise prints M with its revisions), the
  encoded record within the topic's max.message.bytes and
  the producer's message.max.bytes); any invalid line: its number and reason, nothing
  published, exit 1. Then publishes the lines in file order to their mapped partitions (canonical
  JSON key and value, idempotent producer) and prints "line N -> partition P offset O"
  per line. Holds the source's producer guard while publishing: refuses (exit 1) while
  another load or a verify holds it. A database that is restarting when the load begins
  is waited for (about 6 s) before anything is published. Needs AMENDS_DATABASE_URL.

  Flags
    --manifest M              the manifest source-create printed (required)
    --file F                  fixture file, JSON Lines (required; - reads standard input)
    --delivery-timeout-ms N   per-record delivery deadline (default ${defaultDeliveryTimeoutMs})
${kafkaFlagsHelp(26)}

  Example
    $ amendsctl source-load --manifest demo-1.manifest.json --file fixtures/before.jsonl`,
  // Publishing is the work, the printed coordinates only its report (closed-pipe.ts).
  closedStdout: 'continue',
  flags: {
    manifest: { type: 'string', isRequired: true },
    file: { type: 'string', isRequired: true },
    deliveryTimeoutMs: { type: 'number', default: defaultDeliveryTimeoutMs },
    ...kafkaFlags,
  },
  async run(cli, io) {
    const { deliveryTimeoutMs } = cli.flags;
    const manifestPath = cli.flags.manifest as string;
    const file = cli.flags.file as string;
    refuseArguments(cli.input);
    if (!Number.isSafeInteger(deliveryTimeoutMs) || deliveryTimeoutMs < 1 || deliveryTimeoutMs > deliveryTimeoutMaxMs) {
      throw usageError(`--delivery-timeout-ms must be an integer in [1, ${deliveryTimeoutMaxMs}]`);
    }
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);

    const manifest = await readManifestFile(manifestPath);
    const text = await readInputText(file, 'fixture file');
    // Routed as the newest revision the manifest carries routes (config-revise prints it).
    const lines = encodeFixtureFile(text, newestConfigOf(manifest));
    if (lines.length === 0) throw invalidInput(`fixture file ${inputName(file)} has no lines: nothing to publish`);
    // The broker's part of validation, before the database is touched: the live topic and
    // the size each record may have there.
    await checkLiveTopic(manifest, brokers);
    const sizeLimit = await readRecordSizeLimit(brokers, manifest.source_topic);
    refuseOversizedRecords(lines, sizeLimit);

    const applicationName = `amendsctl source-load pid ${process.pid}`;
    // Nothing is published yet: a database that restarts (seconds) is waited for, as the
    // broker's part is (live-source-topic.ts), rather than failing the whole load.
    const db = await retryOutages(
      databaseStartAttempts,
      () => openRegistered(manifest, databaseUrl, applicationName),
      isDependencyOutage,
    );
    try {
      const settings = {
        databaseUrl,
        brokers,
        deliveryTimeoutMs,
        applicationName,
        batchSizeBytes: sizeLimit.batchSizeBytes,
      };
      await loadUnderGuard(manifest, lines, settings, io);
    } finally {
      await db.close();
    }
    return exitCodes.ok;
  },
});

/** Tries of the database open and registration: pauses of 0.25, 0.5, 1, 2 and 2 s between. */
const databaseStartAttempts = 6;

/** The database, opened (migrated) with the namespace registered, or the failure described. */
async function openRegistered(manifest: Manifest, databaseUrl: string, applicationName: string): Promise<Database> {
  const db = await Database.open(databaseUrl, applicationName);
  try {
    await registerNamespace(db.pool, manifest);
    return db;
  } catch (error) {
    await db.close();
    throw describeDatabaseError(error, databaseUrl, `registering namespace ${manifest.config.namespace}`);
  }
}

interface LoadSettings {
  databaseUrl: string;
  brokers: string;
  deliveryTimeoutMs: number;
  applicationName: string;
  batchSizeBytes: number;
}

async function loadUnderGuard(
  manifest: Manifest,
  lines: EncodedFixtureLine[],
  settings: LoadSettings,
  io: CommandIo,
): Promise<void> {
  const incarnation = manifest.config.source_incarnation;
  const guard = await ProducerGuard.open(settings.databaseUrl, incarnation, `${settings.applicationName} guard`);
  try {
    const attempt = await guard.tryAcquire();
    if (!attempt.acquired) {
      throw operationalError(
        `the producer guard of source ${incarnation} is held by ${describeHolder(attempt.holder)}: another load or a verify is running; nothing was published, try again when it has finished`,
      );
    }
    await publishLines(manifest, lines, guard, settings, io);
  } finally {
    // Only now: the producer has fully disconnected (publishLines closes it in its finally).
    await guard.release();
  }
}

/** A recreated topic or a changed partition count would feed another history (live-source-topic.ts). */
function checkLiveTopic(manifest: Manifest, brokers: string): Promise<void> {
  return checkLiveSourceTopic(brokers, `amendsctl-source-load-${process.pid}`, {
    topic: manifest.source_topic,
    incarnation: manifest.config.source_incarnation,
    partitions: manifest.config.partitions,
    expectedBy: 'the manifest',
    consequence: 'nothing was published',
  });
}

async function publishLines(
  manifest: Manifest,
  lines: EncodedFixtureLine[],
  guard: ProducerGuard,
  settings: LoadSettings,
  io: CommandIo,
): Promise<void> {
  const producer = await SourceProducer.open({
    brokers: settings.brokers,
    clientId: `amendsctl-source-load-${process.pid}`,
    deliveryTimeoutMs: settings.deliveryTimeoutMs,
    batchSizeBytes: settings.batchSizeBytes,
  });
  const progress: Progress = createProgress(io, lines.length, 'source-load');
  const load = new LoadOutcomes(lines, guard, progress);
  let closeError: unknown;
  try {
    await queueLines(producer, manifest.source_topic, lines, guard, load);
  } finally {
    // Every queued line has an outcome here (each is bounded by the delivery timeout);
    // close() still rejects any stragglers as unknown and waits for the full disconnect.
    closeError = await producer.close(kafkaClientCloseTimeoutMs).then(
      () => undefined,
      (error: unknown) => error,
    );
    progress.stop();
  }
  load.printReady();
  const problem = summarizeFailures(lines, load.outcomes, {
    lost: guard.lost,
    firstUnguardedLine: load.firstUnguarded === undefined ? undefined : lines[load.firstUnguarded]?.line,
  });
  if (problem !== undefined) throw operationalError(problem);
  if (closeError !== undefined) {
    // All lines were acknowledged, but the client did not confirm its shutdown in time.
    throw operationalError(`every line was acknowledged, but closing the producer failed: ${errorMessage(closeError)}`);
  }
}

/**
 * Queues the lines in file order, at most `inFlightMax` unacknowledged, until one fails or the
 * guard is lost; then waits until every queued line has settled.
 */
async function queueLines(
  producer: SourceProducer,
  topic: string,
  lines: readonly EncodedFixtureLine[],
  guard: ProducerGuard,
  load: LoadOutcomes,
): Promise<void> {
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (load.stopReason !== undefined) break;
    if (guard.lost !== undefined) {
      load.stopReason = `the producer guard was lost (${guard.lost})`;
      break;
    }
    if (i >= inFlightMax) await inFlight[i - inFlightMax];
    const line = lines[i]!;
    let queued: QueuedRecord;
    try {
      // Awaited before the next line is queued: file order is queue order.
      queued = await producer.enqueue(topic, line.partition, line.key, line.value);
    } catch (error) {
      load.settle(i, { error: asPublicationError(error) });
      break;
    }
    inFlight.push(
      queued.delivered.then(
        (delivered) => load.settle(i, { delivered }),
        (error: unknown) => load.settle(i, { error: asPublicationError(error) }),
      ),
    );
  }
  await Promise.all(inFlight);
}

function asPublicationError(error: unknown): PublicationError {
  return error instanceof PublicationError ? error : new PublicationError('failed', String(error));
}

/**
 * Every line gets exactly one outcome; the first error stops further queuing (lines already
 * queued still settle, bounded by the delivery timeout). Coordinates appear in file order: a
 * line is printed once it and every line before it have an outcome (failed lines print
 * nothing on stdout; the diagnostic names them).
 */
class LoadOutcomes {
  readonly outcomes: (LineOutcome | undefined)[];
  /** Why queuing stopped early, if it did. */
  stopReason: string | undefined;
  /**
   * The first line (file order) acknowledged once the guard's loss was known: from there on
   * the load published without the guard, so a verify may have compared meanwhile.
   */
  firstUnguarded: number | undefined;
  private completed = 0;
  private printed = 0;

  constructor(
    private readonly lines: readonly EncodedFixtureLine[],
    private readonly guard: ProducerGuard,
    private readonly progress: Progress,
  ) {
    this.outcomes = new Array(lines.length).fill(undefined);
  }

  settle(i: number, outcome: LineOutcome): void {
    this.outcomes[i] = outcome;
    if (this.guard.lost !== undefined && 'delivered' in outcome) {
      this.firstUnguarded = Math.min(this.firstUnguarded ?? i, i);
    }
    if ('error' in outcome) this.stopReason ??= `line ${this.lines[i]!.line} was not published`;
    this.completed++;
    this.progress.update(this.completed);
    this.printReady();
  }

  printReady(): void {
    while (this.printed < this.lines.length) {
      const outcome = this.outcomes[this.printed];
      if (outcome === undefined) break;
      const line = this.lines[this.printed]!;
      if ('delivered' in outcome) {
        this.progress.printLine(
          `line ${line.line} -> partition ${outcome.delivered.partition} offset ${outcome.delivered.offset}`,
        );
      }
      this.printed++;
    }
  }
}

/** What became of the producer guard during a load: lost (why), and from which line on. */
export interface GuardDuringLoad {
  lost: string | undefined;
  /** The first line acknowledged after the loss was known, if any. */
  firstUnguardedLine: number | undefined;
}

/**
 * One line naming the first failed or unknown line (file order) and what happened to the rest;
 * or, when every line was acknowledged but the guard was lost on the way (even after the last
 * line was queued), which lines were published without it.
 */
export function summarizeFailures(
  lines: readonly EncodedFixtureLine[],
  outcomes: readonly (LineOutcome | undefined)[],
  guard: GuardDuringLoad,
): string | undefined {
  const guardLost = guard.lost;
  let delivered = 0;
  let failed = 0;
  let unknown = 0;
  let notSent = 0;
  let first: { line: number; error: PublicationError } | undefined;
  outcomes.forEach((outcome, i) => {
    if (outcome === undefined) notSent++;
    else if ('delivered' in outcome) delivered++;
    else {
      if (outcome.error.kind === 'unknown') unknown++;
      else failed++;
      first ??= { line: lines[i]!.line, error: outcome.error };
    }
  });
  if (first === undefined && notSent === 0) {
    if (guardLost === undefined) return undefined;
    const unguarded =
      guard.firstUnguardedLine === undefined
        ? 'each before the loss was noticed, but the guard was gone before the producer had closed'
        : `lines from ${guard.firstUnguardedLine} on after the loss was noticed`;
    return `the producer guard was lost (${guardLost}): all ${lines.length} lines were acknowledged, ${unguarded}, so a verify may have compared while they were published; run verify again`;
  }
  const counts = `${delivered} of ${lines.length} lines acknowledged, ${failed} failed, ${unknown} unknown, ${notSent} not sent`;
  const rerun = 'rerunning may redeliver identical revisions (the worker decides them as DUPLICATE)';
  if (first !== undefined) {
    const what = first.error.kind === 'unknown' ? 'publication outcome is unknown' : 'publication failed';
    return `line ${first.line}: ${what}: ${first.error.message} (${counts}); ${rerun}`;
  }
  return `the load stopped early: ${guardLost ? `the producer guard was lost (${guardLost})` : 'lines were left unsent'} (${counts}); ${rerun}`;
}
