/**
 * The showcase's step 5 (docs/design.md#showcase): under filler, a relay with the owned
 * fault point (AMENDS_FAULT) exits after publish and before mark; the next relay publishes
 * those versions again and the view must ignore the second copies.
 */
import { relayFaultExitAfterPublish } from '../io/transport/outbox-relay.js';
import { drainBudgetMs, faultBudgetMs, type ShowcaseContext, timeOf } from './showcase-context.js';
import { fillerPerKey } from './showcase-loads.js';

export async function relayDiesAfterPublish(run: ShowcaseContext): Promise<void> {
  const { timeline, probe, manifestPath } = run;
  timeline.note('step 5: the relay dies after publish, before mark');
  await run.relay?.stop();
  const faulty = run.children.start(
    'relay-fault',
    ['relay', '--manifest', manifestPath, '--instance-id', 'relay-fault'],
    {
      AMENDS_FAULT: relayFaultExitAfterPublish,
    },
  );
  faulty.expectedExit = true;
  const ignoredBefore = await probe.viewIgnored();
  await run.loads.load('stage-5', run.loads.filler('E', fillerPerKey.relay));
  const injected = await faulty.waitForLog('the relay fault point', (l) => l.msg === 'fault_injected', faultBudgetMs);
  await faulty.exited;
  const republished = Number(injected.acknowledged_rows);
  const relayFault = timeline.fault(
    'relay_exit_after_publish',
    'relay-fault',
    timeOf(injected),
    `relay-fault published ${injected.acknowledged_rows} versions and died (SIGKILL) before marking them`,
  );
  run.relay = run.children.start('relay-2', ['relay', '--manifest', manifestPath, '--instance-id', 'relay-2']);
  // A second copy is a duplicate, or stale when a newer version of its day came in between.
  const ignored = await run.waitFor(
    'the republished versions ignored by the view',
    async () => {
      const [drain, now] = await Promise.all([probe.drain(), probe.viewIgnored()]);
      const delta = { duplicate: now.duplicate - ignoredBefore.duplicate, stale: now.stale - ignoredBefore.stale };
      return drain.relayed && drain.viewed && delta.duplicate + delta.stale >= republished ? delta : undefined;
    },
    drainBudgetMs,
  );
  timeline.recovered(
    relayFault,
    `relay-2 published the unmarked rows again; the view ignored the second copies: ${ignored.duplicate} identical duplicates, ${ignored.stale} stale (a newer version came in between)`,
    new Date(),
  );
}
