/**
 * `amendsctl verify --manifest M [--json] [--wait S]` (docs/design.md#bounded-verifier):
 * takes the producer guard, fixes the bound, re-reads the source, runs the oracle and compares
 * the store, outbox, output topic and view with it (src/verify/verify-run.ts). Exit 0 PASS, 3
 * FAIL, 4 INCOMPLETE; 1 when something prevents the comparison.
 *
 * Test-only fault point (AMENDS_FAULT=verify-stop-after-guard): once the guard is held, the
 * command logs `fault_point` on stderr and stops itself with SIGSTOP, so a test can show that
 * a load started now is refused; SIGCONT lets it go on.
 */

import { databaseUrlFrom } from '../../io/store/postgres.js';
import { usageError } from '../../kernel/amends-error.js';
import { defaultGuardWaitMs, runVerify } from '../../verify/verify-run.js';
import type { VerifyPhase } from '../../verify/verify-stats.js';
import { type CommandIo, defineCommand } from '../command.js';
import { exitCodeFor, exitCodeForVerdict, exitCodes, failureLine } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { capHeapGrowth } from '../heap-growth.js';
import { readManifestFile } from '../input-files.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
import { createProgress, type Progress } from '../progress-bar.js';
import { renderVerifyReport } from '../verify-report.js';

export const verifyFaultStopAfterGuard = 'verify-stop-after-guard';

/** Bars only for a run worth watching; small sources finish before one would draw. */
const progressFromOffsets = 10_000;
const phaseUnits: Record<VerifyPhase, string> = { source: 'offsets', store: 'rows', topic: 'offsets', view: 'rows' };
const waitMaxSeconds = 3_600;

export const verifyCommand = defineCommand({
  name: 'verify',
  summary: 'bounded verifier: recompute everything from the source and compare store, outbox, topic and view',
  help: `verify --manifest M [--json] [--wait S]

  Waits for the source's producer guard (an active source-load finishes first; no new
  load starts until verify is done), checks the source topic (incarnation, partitions,
  retention, history from offset 0) and the output binding, fixes the bound (every
  partition's read-committed end), re-reads the source with read_committed, recomputes
  every decision and output version with the independent oracle and compares: each
  frontier with its end, decisions, output versions, quarantine (raw bytes), the outbox
  (everything published), the output topic (every version, no conflicting duplicates,
  nothing extra) and the view (the database's latest versions). Without an output
  binding only the source side is compared. Needs AMENDS_DATABASE_URL.

  Exit codes: 0 PASS, 3 FAIL (a wrong, missing, extra or conflicting decision or
  version), 4 INCOMPLETE (nothing wrong, but not drained: a frontier below its end,
  relay or view behind), 1 when the comparison could not run.

  Flags
    --manifest M   the namespace's manifest (required)
    --json         one JSON document: verdict, reasons, partitions, counts, differences,
                   stats (time per phase, records/s, peak RSS);
                   {"verdict":"ERROR","reasons":[…]} (exit 1) when it cannot compare
    --wait S       seconds to wait for the producer guard (default ${defaultGuardWaitMs / 1000})
${kafkaFlagsHelp(15)}

  Example
    $ amendsctl verify --manifest manifest.json --json`,
  flags: {
    manifest: { type: 'string', isRequired: true },
    json: { type: 'boolean', default: false },
    wait: { type: 'number', default: defaultGuardWaitMs / 1000 },
    ...kafkaFlags,
  },
  async run(cli, io) {
    const { wait, json } = cli.flags;
    if (!Number.isFinite(wait) || wait < 0 || wait > waitMaxSeconds) {
      throw usageError(`--wait must be a number of seconds in [0, ${waitMaxSeconds}]`);
    }
    refuseArguments(cli.input);
    try {
      return await verify(cli.flags, io);
    } catch (error) {
      // A machine reading --json gets a document on every path that is not a usage error;
      // the dispatcher still prints the one-line diagnostic on stderr and exits 1.
      if (json && exitCodeFor(error) !== exitCodes.usage) {
        io.stdout.write(`${JSON.stringify({ verdict: 'ERROR', reasons: [failureLine(error)] })}\n`);
      }
      throw error;
    }
  },
});

interface VerifyFlags {
  manifest?: string;
  json: boolean;
  wait: number;
  brokers?: string;
  kafkaConfig?: string;
}

/**
 * The verifier keeps 15–60 MB alive on the JavaScript heap (its columns lie outside it), so
 * V8's default growth held up to 80 MB of garbage. At 30 % the 2,000,000-record wide verify
 * peaked at 285–288 MB instead of 329 MB, in 108–111 s instead of 94 s (docs/benchmarks.md).
 */
export const verifyHeapGrowingPercent = 30;

async function verify(flags: VerifyFlags, io: CommandIo): Promise<number> {
  capHeapGrowth(verifyHeapGrowingPercent);
  const { wait, json } = flags;
  const databaseUrl = databaseUrlFrom(io.env);
  const brokers = kafkaEndpointFrom(flags, io.env);
  const manifest = await readManifestFile(flags.manifest as string);
  let progress: Progress | undefined;
  let shown: VerifyPhase | undefined;
  let watch = false;
  const stopAfterGuard = io.env.AMENDS_FAULT === verifyFaultStopAfterGuard;
  try {
    const report = await runVerify({
      manifest,
      databaseUrl,
      brokers,
      guardWaitMs: Math.round(wait * 1000),
      applicationName: `amendsctl verify pid ${process.pid}`,
      onProgress: (phase, done, total) => {
        if (phase !== shown) {
          progress?.stop();
          shown = phase;
          // The source's size decides for every phase: one bar per phase, or none at all.
          if (phase === 'source') watch = total >= progressFromOffsets;
          progress = watch ? createProgress(io, total, `verify ${phase}`, phaseUnits[phase], true) : undefined;
        }
        progress?.update(done);
      },
      ...(stopAfterGuard
        ? {
            afterGuard: async () => {
              io.stderr.write(`${JSON.stringify({ msg: 'fault_point', point: verifyFaultStopAfterGuard })}\n`);
              process.kill(process.pid, 'SIGSTOP');
            },
          }
        : {}),
    });
    progress?.stop();
    progress = undefined;
    io.stdout.write(
      json
        ? `${JSON.stringify(report)}\n`
        : renderVerifyReport(report, { namespace: manifest.config.namespace, sourceTopic: manifest.source_topic }),
    );
    return exitCodeForVerdict(report.verdict);
  } finally {
    progress?.stop();
  }
}
