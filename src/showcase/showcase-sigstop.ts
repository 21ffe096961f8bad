/**
 * The showcase's step 3 (docs/design.md#showcase): under filler, the owner of partition 1
 * stops (SIGSTOP) after a poll and before its store transaction, until its session has
 * expired and the group has handed the partition to the other worker (new epoch); then
 * SIGCONT: its late process call must be fenced and write nothing.
 */
import { operationalError } from '../kernel/amends-error.js';
import { expectOnce, faultBudgetMs, type ShowcaseContext, takeoverBudgetMs, timeOf } from './showcase-context.js';
import { fillerPerKey } from './showcase-loads.js';

export async function stopPastSessionTimeout(run: ShowcaseContext): Promise<void> {
  const { timeline, loads, probe } = run;
  timeline.note('step 3: SIGSTOP before the store transaction, past the session timeout');
  const stage3 = loads.filler('C', fillerPerKey.stop);
  const stopOffset = loads.nextOffset(1) + Math.floor(loads.countOn(stage3, 1) / 2);
  const stopped = await run.pauseAt(1, stopOffset);
  const loading = loads.load('stage-3', stage3);
  const stopPoint = await run.atPause(stopped.child, 1, stopOffset);
  const staleEpoch = Number(stopPoint.epoch);
  const stopFault = timeline.fault(
    'sigstop',
    `${stopped.owner} at partition 1 offset ${stopOffset}`,
    timeOf(stopPoint),
    `${stopped.owner} stopped (SIGSTOP) after a poll, before the store transaction of partition 1 offset ${stopOffset} (epoch ${staleEpoch})`,
  );
  await loading;
  const takeover = await run.waitFor(
    `a new owner of partition 1 past offset ${stopOffset}`,
    async () => {
      const row = (await probe.partitions()).get(1);
      return row && row.epoch > staleEpoch && row.frontier > stopOffset ? row : undefined;
    },
    takeoverBudgetMs,
  );
  timeline.note(`partition 1 taken over by ${takeover.owner} at epoch ${takeover.epoch}; SIGCONT ${stopped.owner}`);
  const from = stopped.child.logs.length;
  stopped.child.signal('SIGCONT');
  const fenced = await stopped.child.waitForLog(
    'the fenced late process call',
    (l) => l.msg === 'process_attempt' && l.partition === 1 && l.epoch === staleEpoch,
    faultBudgetMs,
    from,
  );
  if (fenced.observation !== 'fenced') {
    throw operationalError(`the late process call of ${stopped.owner} was ${String(fenced.observation)}, not fenced`);
  }
  const stopDecisions = await probe.decisionsAt(1, stopOffset);
  expectOnce(stopDecisions, `partition 1 offset ${stopOffset}`);
  if (stopDecisions.epochs[0] === staleEpoch) {
    throw operationalError(`partition 1 offset ${stopOffset} was written under the stale epoch ${staleEpoch}`);
  }
  timeline.recovered(
    stopFault,
    `late process call under epoch ${staleEpoch} fenced (epoch ${takeover.epoch} owns it): nothing written; offset ${stopOffset} decided once, under epoch ${stopDecisions.epochs[0]}`,
    timeOf(fenced),
  );
}
