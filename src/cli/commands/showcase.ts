/**
 * `amendsctl showcase [--tui] [--keep]` (docs/design.md#showcase): one command that shows a
 * newcomer the whole system surviving real, owned faults, ending in the verifier's verdict.
 * The steps are in showcase-run.ts; this file is the command: flags, the timeline's
 * destination (stderr or the dashboard), Ctrl-C, the report, the exit code (0 only on PASS).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Manifest } from '../../domain/config.js';
import { databaseUrlFrom } from '../../io/store/postgres.js';
import { operationalError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import { type ShowcaseSetup, showcaseBatchSize } from '../../showcase/showcase-context.js';
import { type ShowcaseReport, writeShowcaseReport } from '../../showcase/showcase-report.js';
import { runShowcase } from '../../showcase/showcase-run.js';
import { ShowcaseTimeline } from '../../showcase/showcase-timeline.js';
import { defineCommand } from '../command.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';
import { kafkaEndpointFrom, kafkaFlags, kafkaFlagsHelp } from '../kafka-flags.js';
// ink and react load only under --tui: every amendsctl command imports this module.
import type { ShowcaseDashboard } from '../showcase-dashboard.js';

/** The verdict stays on the live dashboard this long before the children are stopped. */
const verdictShownMs = 3_000;

export const showcaseCommand = defineCommand({
  name: 'showcase',
  summary: 'fault-injection demonstration on fresh topics, ending in the verifier',
  help: `showcase [--tui] [--keep] [--brokers LIST]

  Creates fresh source and output topics and a fresh namespace (two stock keys on two
  partitions), starts two workers, a relay and a view as child processes, loads the
  fixture stories with a filler load on both keys (batch size ${showcaseBatchSize}), and injects, each at
  its exact point: a SIGKILL while a worker decides the correction; a SIGSTOP after a
  poll and before the store transaction, past the session timeout, then SIGCONT (the late
  call is fenced); one COMMIT reply dropped on the wire (resolved by re-observation); a
  relay that dies after publish and before mark (the view ignores the duplicates). Then it
  drains and runs \`amendsctl verify\`. It prints the timeline of fault → observed recovery
  and writes artifacts/showcase/<run-id>/report.json and report.md, with every child's
  log. Exit 0 only on PASS (3 FAIL, 4 INCOMPLETE, 1 when it could not finish). Every child
  it starts, it stops, on every exit path (Ctrl-C included). Needs AMENDS_DATABASE_URL.

  Flags
    --tui           show it live in the dashboard (amends tui) with the fault timeline
    --keep          after the verdict, leave the workers, relay and view running (for
                    inspect, tui, export) until Ctrl-C
${kafkaFlagsHelp(16)}

  Example
    $ amendsctl showcase`,
  flags: {
    tui: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    ...kafkaFlags,
  },
  async run(cli, io) {
    refuseArguments(cli.input);
    const databaseUrl = databaseUrlFrom(io.env);
    const brokers = kafkaEndpointFrom(cli.flags, io.env);
    const tui = cli.flags.tui === true;
    if (tui && (io.stdout.isTTY !== true || process.stdin.isTTY !== true)) {
      throw operationalError('showcase --tui draws on a terminal: run it in one, or without --tui');
    }
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').toLowerCase();
    const runId = `${stamp}-${randomBytes(2).toString('hex')}`;
    // Absolute: the children run from the package root, the report lands where the user is.
    const runDir = resolve('artifacts', 'showcase', runId);
    mkdirSync(runDir, { recursive: true });
    const startedAt = new Date();

    const { abort, onInterrupt } = interruptControl();
    const keepUntil = cli.flags.keep
      ? new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true }))
      : undefined;

    io.stderr.write(`showcase ${runId}: evidence in ${relative(process.cwd(), runDir)}\n`);
    const view: ShowcaseDashboard | undefined = tui
      ? new (await import('../showcase-dashboard.js')).ShowcaseDashboard(databaseUrl, brokers, onInterrupt)
      : undefined;
    const timeline = new ShowcaseTimeline(
      view === undefined
        ? (text, at) => io.stderr.write(`${at.toISOString().slice(11, 23)}  ${text}\n`)
        : (text) => view.store.addTimeline(text),
    );
    process.on('SIGINT', onInterrupt);
    process.on('SIGTERM', onInterrupt);
    const report = emptyReport(runId, startedAt, timeline);
    let code: number = exitCodes.failure;
    try {
      const outcome = await runShowcase({
        runId,
        runDir,
        databaseUrl,
        brokers,
        timeline,
        signal: abort.signal,
        children: report.children,
        ...(keepUntil === undefined ? {} : { keepUntil }),
        ...dashboardHooks(view),
      });
      report.verify = outcome.verify;
      report.verdict = String(outcome.verify.verdict);
      code = outcome.verifyExitCode;
    } catch (error) {
      report.error = abort.signal.aborted ? 'interrupted (Ctrl-C)' : errorMessage(error);
      timeline.note(`stopped: ${report.error}`);
    } finally {
      process.off('SIGINT', onInterrupt);
      process.off('SIGTERM', onInterrupt);
      report.finished_at = new Date().toISOString();
      writeShowcaseReport(runDir, report, timeline.lines);
      await view?.close();
    }
    io.stdout.write(summary(report, runDir, timeline.lines, tui));
    if (report.error !== undefined) {
      io.stderr.write(`amendsctl showcase: ${report.error}\n`);
      return abort.signal.aborted ? 130 : exitCodes.failure;
    }
    return code;
  },
});

/** The report before the run: ERROR until the verdict; the timeline's faults fill in as they happen. */
function emptyReport(runId: string, startedAt: Date, timeline: ShowcaseTimeline): ShowcaseReport {
  return {
    run_id: runId,
    verdict: 'ERROR',
    started_at: startedAt.toISOString(),
    finished_at: startedAt.toISOString(),
    faults: timeline.faults,
    verify: null,
    children: [],
  };
}

/** Ctrl-C (or SIGTERM): the first stops the showcase cleanly, through `abort`. */
function interruptControl(): { abort: AbortController; onInterrupt: () => void } {
  const abort = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts += 1;
    // The second Ctrl-C does not wait for a clean stop; the exit hook SIGKILLs the children.
    if (interrupts > 1) process.exit(130);
    abort.abort(operationalError('interrupted: stopping every child process'));
  };
  return { abort, onInterrupt };
}

/** Under --tui: the dashboard starts with the manifest and shows the verdict a while on live rows. */
function dashboardHooks(view: ShowcaseDashboard | undefined): Pick<ShowcaseSetup, 'onManifest' | 'onVerdict'> {
  if (view === undefined) return {};
  return {
    onManifest: (m: Manifest) => view.start(m),
    onVerdict: async (verify: Record<string, unknown>) => {
      view.store.addTimeline(`verdict: ${String(verify.verdict)}`);
      await sleep(verdictShownMs);
    },
  };
}

function summary(report: ShowcaseReport, runDir: string, lines: readonly string[], withTimeline: boolean): string {
  const verify = report.verify;
  const counts = verify?.counts as Record<string, unknown> | undefined;
  const reasons = (verify?.reasons as unknown[] | undefined) ?? [];
  return [
    '',
    ...(withTimeline ? lines : []),
    ...(withTimeline ? [''] : []),
    `showcase ${report.run_id}: ${report.verdict}`,
    ...report.faults.map((f) => {
      const after =
        f.recovered_at === null
          ? 'not recovered'
          : `recovered in ${((Date.parse(f.recovered_at) - Date.parse(f.injected_at)) / 1000).toFixed(2)} s`;
      return `  ${f.kind.padEnd(24)} ${after}: ${f.observed ?? '—'}`;
    }),
    ...(counts === undefined
      ? []
      : [
          `  counts: ${Object.entries(counts)
            .map(([k, v]) => `${k} ${String(v)}`)
            .join(', ')}`,
        ]),
    ...reasons.map((r) => `  reason: ${String(r)}`),
    `  report: ${relative(process.cwd(), join(runDir, 'report.md'))} and report.json`,
    '',
  ].join('\n');
}
