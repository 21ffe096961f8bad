/**
 * The showcase's step 4 (docs/design.md#showcase): under filler, the fault proxy between
 * the owner of partition 0 and the database drops one COMMIT reply: the statement committed,
 * the reply never arrives. The worker must resolve the unknown outcome by re-observation.
 */
import { storeStatementNames } from '../io/store/sql/statement-names.js';
import { bindStatementName } from './pg-fault-proxy.js';
import { faultBudgetMs, type ShowcaseContext, timeOf, type WorkerProxy } from './showcase-context.js';
import { fillerPerKey } from './showcase-loads.js';
import type { ShowcaseChild } from './showcase-processes.js';

export async function dropCommitReply(run: ShowcaseContext): Promise<void> {
  const { timeline } = run;
  timeline.note('step 4: one COMMIT reply dropped on the wire');
  const replyOwner = await run.ownerOf(0);
  const replyWorker = run.workers.get(replyOwner) as ShowcaseChild;
  let droppedAt: Date | undefined;
  const replyFrom = replyWorker.logs.length;
  (run.proxies.get(replyOwner) as WorkerProxy).proxy.arm({
    when: (m) => bindStatementName(m) === storeStatementNames.commitBatch,
    action: 'drop_reply',
    onFire: () => {
      droppedAt = new Date();
    },
  });
  await run.loads.load('stage-4', run.loads.filler('D', fillerPerKey.commitReply));
  const unknown = await replyWorker.waitForLog(
    'the unknown commit outcome',
    (l) => l.msg === 'process_attempt' && l.observation === 'unknown',
    faultBudgetMs,
    replyFrom,
  );
  const lostPartition = Number(unknown.partition);
  const lostLast = Number(unknown.last_offset);
  const replyFault = timeline.fault(
    'commit_reply_dropped',
    `${replyOwner} partition ${lostPartition} offsets ${unknown.first_offset}–${lostLast}`,
    droppedAt ?? timeOf(unknown),
    `the COMMIT reply of ${replyOwner}'s batch ${unknown.first_offset}–${lostLast} of partition ${lostPartition} dropped by the proxy (the statement committed)`,
  );
  // After the unknown outcome only: a re-claim between the arming and the drop (the owner
  // may still be settling after step 3) logs a store_observed of its own before it.
  const reobserved = await replyWorker.waitForLog(
    'the re-observation',
    (l) => l.msg === 'store_observed' && l.partition === lostPartition,
    faultBudgetMs,
    replyWorker.logs.indexOf(unknown) + 1,
  );
  const verdict =
    reobserved.frontier === lostLast + 1 && reobserved.epoch === unknown.epoch
      ? 'committed: continued without reapplying'
      : `epoch ${reobserved.epoch}, frontier ${reobserved.frontier}`;
  timeline.recovered(
    replyFault,
    `re-observed epoch ${reobserved.epoch}, frontier ${reobserved.frontier} = last offset + 1 → ${verdict}`,
    timeOf(reobserved),
  );
}
