/**
 * The showcase's step 2 (docs/design.md#showcase): before.jsonl and the second key's
 * story with filler, then correction.jsonl. The owner of partition 0 pauses right before the
 * store call whose batch holds the correction (T2 rev 2) and is SIGKILLed there: an abrupt
 * death while deciding a correction. It is restarted with the same --instance-id; the
 * correction must then be decided exactly once.
 */
import { expectOnce, type ShowcaseContext, takeoverBudgetMs, timeOf } from './showcase-context.js';
import { fillerPerKey, fixture } from './showcase-loads.js';

export async function killWhileDecidingCorrection(run: ShowcaseContext): Promise<void> {
  const { timeline, loads, probe } = run;
  timeline.note('step 2: SIGKILL while deciding a correction');
  const stage2 = [
    ...fixture('before.jsonl'),
    ...fixture('second-key.jsonl'),
    ...loads.filler('A', fillerPerKey.before),
  ];
  const correction = fixture('correction.jsonl');
  const stage2Rest = loads.filler('B', fillerPerKey.afterCorrection);
  const correctionOffset = loads.nextOffset(0) + loads.countOn(stage2, 0);
  const killed = await run.pauseAt(0, correctionOffset);
  const loading = loads.load('stage-2', [...stage2, ...correction, ...stage2Rest]);
  const paused = await run.atPause(killed.child, 0, correctionOffset);
  await killed.child.kill();
  const killFault = timeline.fault(
    'sigkill',
    `${killed.owner} at partition 0 offset ${correctionOffset}`,
    timeOf(paused),
    `${killed.owner} SIGKILLed while deciding partition 0 offset ${correctionOffset} (correction T2 rev 2, epoch ${paused.epoch})`,
  );
  run.startWorker(killed.owner, 1);
  await loading;
  const afterKill = await run.waitFor(
    `partition 0 past offset ${correctionOffset}`,
    async () => {
      const row = (await probe.partitions()).get(0);
      return row && row.frontier > correctionOffset ? row : undefined;
    },
    takeoverBudgetMs,
  );
  const decidedOnce = await probe.decisionsAt(0, correctionOffset);
  expectOnce(decidedOnce, `partition 0 offset ${correctionOffset}`);
  timeline.recovered(
    killFault,
    `restarted with the same --instance-id; partition 0 claimed by ${afterKill.owner} at epoch ${afterKill.epoch}; offset ${correctionOffset} decided once (epoch ${decidedOnce.epochs[0]})`,
    new Date(),
  );
}
