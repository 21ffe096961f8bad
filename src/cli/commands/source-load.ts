/**
 * `amendsctl source-load --manifest M --file F [--from-line 1] [--wait 0] [--delivery-timeout-ms 30000]
 * [--brokers B]` (docs/design.md#commands, #producer-guard).
 *
 * Order, each step before the next:
 *  1. AMENDS_DATABASE_URL must be set (one line, exit 1, before anything is read);
 *  2. the manifest and the *whole* file are read and validated: an invalid line names its
 *     number and nothing is published;
 *  3. the live topic is checked against the manifest (UUID, partition count), and every
 *     encoded record against the size the topic and the producer accept
 *     (record-size-limit.ts): an oversized line names its number, nothing is published;
 *  4. the namespace is registered (migrations are applied on first use);
 *  5. the producer guard of the source incarnation is taken (waiting up to --wait seconds),
 *     or the load is refused naming its holder; it is held until the producer has fully
 *     disconnected;
 *  6. lines from --from-line on are published in file order to their mapped partitions with
 *     an idempotent producer; `line N -> partition P offset O` is printed per line, in file order.
 * A failed or unknown publication exits 1 naming the line; SIGINT/SIGTERM stop the queuing,
 * flush, and report the last line known published (load-interruption.ts), exit 130/143.
 * Rerunning is safe either way (source-load-outcomes.ts says why); --from-line skips what is
 * known published.
 */

import type { Manifest } from '../../domain/config.js';
import { newestConfigOf } from '../../domain/config-revision.js';
import { type EncodedFixtureLine, encodeFixtureFile } from '../../domain/fixture-line.js';
import { kafkaClientCloseTimeoutMs } from '../../io/kafka/kafka-timeouts.js';
import { checkLiveSourceTopic } from '../../io/kafka/live-source-topic.js';
import { readRecordSizeLimit, refuseOversizedRecords } from '../../io/kafka/record-size-limit.js';
import { PublicationError, type QueuedRecord, SourceProducer } from '../../io/kafka/source-producer.js';
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
import { exitCodeForSignal, LoadInterruption } from '../load-interruption.js';
import { migrateFlag, noMigrateHelp } from '../migrate-flag.js';
import { createProgress, type Progress } from '../progress-bar.js';
import { interruptionReport, LoadOutcomes, summarizeFailures } from '../source-load-outcomes.js';

const defaultDeliveryTimeoutMs = 30_000;
const deliveryTimeoutMaxMs = 600_000;
const guardWaitMaxS = 3_600;
/** At most this many records queued and unacknowledged at once (memory and timer bound). */
const inFlightMax = 10_000;
/**
 * Test-only fault point (`AMENDS_FAULT=source-load-stop-at-line:N`): once line N is queued the
 * load logs `fault_point` on stderr and stops itself with SIGSTOP, so a test can interrupt it
 * mid-load at a known line; SIGCONT lets it go on.
 */
export const sourceLoadFaultStopAtLine = 'source-load-stop-at-line';

export const sourceLoadCommand = defineCommand({
  name: 'source-load',
  summary: 'validate a fixture file, then publish it to the source topic',
  help: `source-load --manifest M --file F [--from-line 1] [--wait 0] [--delivery-timeout-ms ${defaultDeliveryTimeoutMs}]

  Validates every line of F first ({"key":{item,location},"value":{…}}, the key a
  stock key of M's newest revision (config-revise prints M with its revisions), the
  encoded record within the topic's max.message.bytes and
  the producer's message.max.bytes); any invalid line: its number and reason, nothing
  published, exit 1. Then publishes the lines in file order to their mapped partitions (canonical
  JSON key and value, idempotent producer) and prints "line N -> partition P offset O"
  per line. Holds the source's producer guard while publishing: while another load or a
  verify holds it, waits up to --wait seconds, then refuses (exit 1) naming the holder.
  A database that is restarting when the load begins is waited for (about 6 s) before
  anything is published. Needs AMENDS_DATABASE_URL.

  Ctrl-C (SIGINT) or SIGTERM stops the publishing: the lines in flight are flushed, one
  line on stderr names the last line known published (every line up to it is) and the
  --from-line that publishes the rest, and the exit code is 130 (SIGINT) or 143 (SIGTERM).
  Rerunning is safe, from that line or from the start: a line published twice is decided
  DUPLICATE or STALE (or quarantined again), never changing a balance.

  Flags
    --manifest M              the manifest source-create printed (required)
    --file F                  fixture file, JSON Lines (required; - reads standard input)
    --from-line N             publish from line N on (every line is still validated; default 1)
    --wait S                  seconds to wait for the producer guard (default 0: refuse at once)
    --delivery-timeout-ms N   per-record delivery deadline (default ${defaultDeliveryTimeoutMs})
    --no-migrate              ${noMigrateHelp}
${kafkaFlagsHelp(26)}

  Example
    $ amendsctl source-load --manifest demo-1.manifest.json --file fixtures/before.jsonl`,
  // Publishing is the work, the printed coordinates only its report (closed-pipe.ts).
  closedStdout: 'continue',
  flags: {
    manifest: { type: 'string', isRequired: true },
    file: { type: 'string', isRequired: true },
    fromLine: { type: 'number', default: 1 },
    wait: { type: 'number', default: 0 },
    deliveryTimeoutMs: { type: 'number', default: defaultDeliveryTimeoutMs },
    ...migrateFlag,
    ...kafkaFlags,
  },
  async run(cli, io) {
    const { deliveryTimeoutMs, fromLine, wait } = cli.flags;
    refuseArguments(cli.input);
    if (!Number.isSafeInteger(deliveryTimeoutMs) || deliveryTimeoutMs < 1 || deliveryTimeoutMs > deliveryTimeoutMaxMs) {
      throw usageError(`--delivery-timeout-ms must be an integer in [1, ${deliveryTimeoutMaxMs}]`);
    }
    if (!Number.isSafeInteger(fromLine) || fromLine < 1) throw usageError('--from-line must be an integer from 1 on');
    if (!Number.isFinite(wait) || wait < 0 || wait > guardWaitMaxS) {
      throw usageError(`--wait must be a number of seconds in [0, ${guardWaitMaxS}]`);
    }
    const interruption = new LoadInterruption(io, 'amendsctl source-load');
    try {
      return await load(cli.flags as LoadFlags, io, interruption);
    } finally {
      interruption.dispose();
    }
  },
});

interface LoadFlags {
  manifest: string;
  file: string;
  fromLine: number;
  wait: number;
  deliveryTimeoutMs: number;
  /** False with --no-migrate: the schema must be current already (the run role migrates nothing). */
  migrate: boolean;
  brokers?: string;
  kafkaConfig?: string;
}

async function load(flags: LoadFlags, io: CommandIo, interruption: LoadInterruption): Promise<number> {
  const databaseUrl = databaseUrlFrom(io.env);
  const brokers = kafkaEndpointFrom(flags, io.env);
  const manifest = await readManifestFile(flags.manifest);
  const text = await readInputText(flags.file, 'fixture file');
  // Routed as the newest revision the manifest carries routes (config-revise prints it).
  const lines = encodeFixtureFile(text, newestConfigOf(manifest));
  if (lines.length === 0) throw invalidInput(`fixture file ${inputName(flags.file)} has no lines: nothing to publish`);
  const lastLine = lines[lines.length - 1]!.line;
  if (flags.fromLine > lastLine) {
    throw usageError(`--from-line ${flags.fromLine} is past the last line of ${inputName(flags.file)} (${lastLine})`);
  }
  const selected = lines.filter((l) => l.line >= flags.fromLine);
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
    () => openRegistered(manifest, databaseUrl, applicationName, flags.migrate),
    isDependencyOutage,
  );
  try {
    const settings: LoadSettings = {
      databaseUrl,
      brokers,
      deliveryTimeoutMs: flags.deliveryTimeoutMs,
      applicationName,
      batchSizeBytes: sizeLimit.batchSizeBytes,
      guardWaitMs: Math.round(flags.wait * 1000),
      interruption,
      afterQueued: faultStopAt(io, interruption),
    };
    return await loadUnderGuard(manifest, selected, settings, io);
  } finally {
    await db.close();
  }
}

/** The test-only fault point, when AMENDS_FAULT asks for it. */
function faultStopAt(io: CommandIo, interruption: LoadInterruption): ((line: number) => Promise<void>) | undefined {
  const [fault, at] = (io.env.AMENDS_FAULT ?? '').split(':');
  if (fault !== sourceLoadFaultStopAtLine) return undefined;
  const stopAt = Number(at);
  return async (line) => {
    if (line !== stopAt) return;
    io.stderr.write(`${JSON.stringify({ msg: 'fault_point', point: sourceLoadFaultStopAtLine, line })}\n`);
    process.kill(process.pid, 'SIGSTOP');
    // A signal sent while stopped reaches its listener in a later poll phase of the event
    // loop: let a few turns pass, so it is handled before the next line is queued.
    for (let turn = 0; turn < signalTurnsMax && interruption.signal === undefined; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
}

/** Event-loop turns the fault point gives a pending signal (each turn polls for it). */
const signalTurnsMax = 100;

/** Tries of the database open and registration: pauses of 0.25, 0.5, 1, 2 and 2 s between. */
const databaseStartAttempts = 6;

/** The database, opened (migrated) with the namespace registered, or the failure described. */
async function openRegistered(
  manifest: Manifest,
  databaseUrl: string,
  applicationName: string,
  migrate: boolean,
): Promise<Database> {
  const db = await (migrate ? Database.open : Database.openCurrent)(databaseUrl, applicationName);
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
  /** 0: refuse at once while another load or a verify holds the guard. */
  guardWaitMs: number;
  interruption: LoadInterruption;
  afterQueued: ((line: number) => Promise<void>) | undefined;
}

async function loadUnderGuard(
  manifest: Manifest,
  lines: EncodedFixtureLine[],
  settings: LoadSettings,
  io: CommandIo,
): Promise<number> {
  const incarnation = manifest.config.source_incarnation;
  const guard = await ProducerGuard.open(settings.databaseUrl, incarnation, `${settings.applicationName} guard`);
  try {
    const waitMs = settings.guardWaitMs;
    const attempt = waitMs === 0 ? await guard.tryAcquire() : await guard.acquire(waitMs);
    if (!attempt.acquired) {
      const held = waitMs === 0 ? 'is held' : `is still held after waiting ${waitMs / 1000} s`;
      const advice = waitMs === 0 ? 'or wait for it with --wait S' : 'or wait longer with --wait';
      throw operationalError(
        `the producer guard of source ${incarnation} ${held} by ${describeHolder(attempt.holder)}: another load or a verify is running; nothing was published; try again when it has finished (${advice})`,
      );
    }
    return await publishLines(manifest, lines, guard, settings, io);
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
): Promise<number> {
  const producer = await SourceProducer.open({
    brokers: settings.brokers,
    clientId: `amendsctl-source-load-${process.pid}`,
    deliveryTimeoutMs: settings.deliveryTimeoutMs,
    batchSizeBytes: settings.batchSizeBytes,
  });
  const progress: Progress = createProgress(io, lines.length, 'source-load');
  const load = new LoadOutcomes(lines, guard, progress);
  settings.interruption.startPublishing({
    stop: (reason) => {
      load.stopReason ??= reason;
    },
    reportUnflushed: (signal) => interruptionReport(signal, lines, load.outcomes, guard.lost, false),
  });
  let closeError: unknown;
  try {
    await queueLines(producer, manifest.source_topic, lines, guard, load, settings.afterQueued);
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
  const signal = settings.interruption.signal;
  if (signal !== undefined) {
    io.stderr.write(`amendsctl source-load: ${interruptionReport(signal, lines, load.outcomes, guard.lost)}\n`);
    return exitCodeForSignal(signal);
  }
  const problem = summarizeFailures(lines, load.outcomes, {
    lost: guard.lost,
    firstUnguardedLine: load.firstUnguarded === undefined ? undefined : lines[load.firstUnguarded]?.line,
  });
  if (problem !== undefined) throw operationalError(problem);
  if (closeError !== undefined) {
    // All lines were acknowledged, but the client did not confirm its shutdown in time.
    throw operationalError(`every line was acknowledged, but closing the producer failed: ${errorMessage(closeError)}`);
  }
  return exitCodes.ok;
}

/**
 * Queues the lines in file order, at most `inFlightMax` unacknowledged, until one fails, the
 * guard is lost or a signal stops it; then waits until every queued line has settled.
 */
async function queueLines(
  producer: SourceProducer,
  topic: string,
  lines: readonly EncodedFixtureLine[],
  guard: ProducerGuard,
  load: LoadOutcomes,
  afterQueued: ((line: number) => Promise<void>) | undefined,
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
    await afterQueued?.(line.line);
  }
  await Promise.all(inFlight);
}

function asPublicationError(error: unknown): PublicationError {
  return error instanceof PublicationError ? error : new PublicationError('failed', String(error));
}
