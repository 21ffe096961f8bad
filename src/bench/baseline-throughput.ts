/**
 * Runs two reference consumers of one kind (baseline-consumer.ts: naive, floor or connect) in a
 * fresh group over the same backlog topic, into tables of their own in the same PostgreSQL,
 * and measures records/s the same way as the workers: records consumed between the first and
 * the last committed poll.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BaselineKind, baselineDropSql, baselineTablesSql } from './baseline-writes.js';
import { type BenchContext, repoRoot } from './bench-context.js';
import { BenchProcess } from './bench-process.js';

export interface BaselineResult {
  rps: number;
  records: number;
  seconds: number;
  peak_rss_mb: number[];
}

const baselineLimitMs = 600_000;
const reportEveryMs = 5_000;

export async function measureBaseline(
  ctx: BenchContext,
  kind: BaselineKind,
  topic: string,
  total: number,
): Promise<BaselineResult> {
  const prefix = `amends_bench_${kind}_${ctx.runId.replaceAll('-', '_')}`;
  for (const sql of baselineTablesSql(kind, prefix)) await ctx.pool.query(sql);
  const commits: { records: number; at: number }[] = [];
  const options = { kind, brokers: ctx.brokers, topic, group: ctx.name(kind), databaseUrl: ctx.databaseUrl, prefix };
  const consumers = ['a', 'b'].map((w) =>
    ctx.track(
      new BenchProcess({
        name: `${kind}-${w}`,
        command: process.execPath,
        args: [join(repoRoot, 'dist', 'bench', 'baseline-consumer.js'), JSON.stringify(options)],
        env: ctx.env,
        logPath: join(ctx.logsDir, `${kind}-${w}.log`),
        onStdoutLine: (line) => commits.push(JSON.parse(line) as { records: number; at: number }),
      }),
    ),
  );
  const started = Date.now();
  let lastReport = 0;
  try {
    for (;;) {
      await sleep(250);
      const consumed = commits.reduce((a, c) => a + c.records, 0);
      if (Date.now() - lastReport > reportEveryMs || consumed >= total) {
        lastReport = Date.now();
        ctx.progress(`  ${kind}: ${consumed.toLocaleString('en')} / ${total.toLocaleString('en')} consumed`);
      }
      if (consumed >= total) break;
      const dead = consumers.find((c) => !c.running);
      if (dead !== undefined) throw new Error(`${dead.name} exited early (see ${ctx.logsDir}/${dead.name}.log)`);
      if (Date.now() - started > baselineLimitMs) throw new Error(`the ${kind} baseline did not finish within 600 s`);
    }
    const peak = consumers.map((c) => c.peakRssMb());
    await Promise.all(consumers.map((c) => c.stop()));
    const sorted = [...commits].sort((a, b) => a.at - b.at);
    const first = sorted[0] ?? { records: 0, at: 0 };
    const last = sorted[sorted.length - 1] ?? first;
    const records = sorted.reduce((a, c) => a + c.records, 0);
    const seconds = (last.at - first.at) / 1000;
    return { rps: seconds > 0 ? (records - first.records) / seconds : 0, records, seconds, peak_rss_mb: peak };
  } finally {
    for (const sql of baselineDropSql(kind, prefix)) await ctx.pool.query(sql);
  }
}
