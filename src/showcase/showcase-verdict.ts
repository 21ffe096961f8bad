/**
 * The showcase's step 6 (docs/design.md#showcase): cancel-last-day.jsonl, wait until the
 * whole chain has drained, then `amendsctl verify --json`, whose verdict and exit code are the
 * showcase's. Under --keep the children keep running after the verdict until told to stop.
 */
import { operationalError } from '../kernel/amends-error.js';
import { drainBudgetMs, type ShowcaseContext, type ShowcaseOutcome } from './showcase-context.js';
import { fixture } from './showcase-loads.js';
import { runAmendsctl } from './showcase-processes.js';

export async function drainAndVerify(run: ShowcaseContext): Promise<ShowcaseOutcome> {
  const { timeline, setup, manifestPath } = run;
  timeline.note('step 6: cancel-last-day.jsonl, drain, verify');
  await run.loads.load('stage-6', fixture('cancel-last-day.jsonl'));
  await run.waitFor(
    'the whole chain drained (decided, relayed, viewed)',
    async () => {
      const drain = await run.probe.drain();
      return drain.decided && drain.relayed && drain.viewed ? drain : undefined;
    },
    drainBudgetMs,
  );
  timeline.note('drained: every record decided, every version relayed and viewed');
  const verifyRun = await runAmendsctl(['verify', '--manifest', manifestPath, '--json'], run.env);
  let verify: Record<string, unknown>;
  try {
    verify = JSON.parse(verifyRun.stdout) as Record<string, unknown>;
  } catch {
    throw operationalError(`amendsctl verify exited ${verifyRun.code} without a report: ${verifyRun.stderr.trim()}`);
  }
  timeline.note(`verify: ${String(verify.verdict)} (exit ${verifyRun.code})`);
  await setup.onVerdict?.(verify);
  if (setup.keepUntil) {
    timeline.note('--keep: the workers, relay and view keep running; Ctrl-C stops them');
    await setup.keepUntil;
  }
  return { manifestPath, verify, verifyExitCode: verifyRun.code ?? 1 };
}
