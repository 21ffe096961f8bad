/**
 * Runs two naive baseline consumers (naive-consumer.ts) in a fresh group over the same backlog
 * topic, into their own table in the same PostgreSQL, and measures records/s the same way as
 * the workers: records consumed between the first and the last committed upsert.
 */
import { join } from 'node:path';
import { type BenchContext, repoRoot, sleep } from './bench-context.js';
import { BenchProcess } from './bench-process.js';

export interface NaiveResult {
  rps: number;
  records: number;
  seconds: number;
  peak_rss_mb: number[];
}

export async function measureNaive(ctx: BenchContext, topic: string, total: number): Promise<NaiveResult> {
  const table = `amends_bench_naive_${ctx.runId.replaceAll('-', '_')}`;
  await ctx.pool.query(
    `CREATE TABLE ${table} (item text NOT NULL, location text NOT NULL, day text NOT NULL, qty bigint NOT NULL,
                            PRIMARY KEY (item, location, day))`,
  );
  const commits: { records: number; at: number }[] = [];
  const options = { brokers: ctx.brokers, topic, group: `${ctx.name('naive')}`, databaseUrl: ctx.databaseUrl, table };
  const consumers = ['a', 'b'].map((w) =>
    ctx.track(
      new BenchProcess({
        name: `naive-${w}`,
        command: process.execPath,
        args: [join(repoRoot, 'dist', 'bench', 'naive-consumer.js'), JSON.stringify(options)],
        env: ctx.env,
        logPath: join(ctx.logsDir, `naive-${w}.log`),
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
      if (Date.now() - lastReport > 5_000 || consumed >= total) {
        lastReport = Date.now();
        ctx.progress(`  naive: ${consumed.toLocaleString('en')} / ${total.toLocaleString('en')} consumed`);
      }
      if (consumed >= total) break;
      const dead = consumers.find((c) => !c.running);
      if (dead !== undefined) throw new Error(`${dead.name} exited early (see ${ctx.logsDir}/${dead.name}.log)`);
      if (Date.now() - started > 600_000) throw new Error('the naive baseline did not finish within 600 s');
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
    await ctx.pool.query(`DROP TABLE IF EXISTS ${table}`);
  }
}
