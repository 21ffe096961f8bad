/**
 * The Kafka Streams peer's throughput on the bench's backlog (docs/benchmarks.md, "kstreams"):
 * a fresh application id (so a fresh consumer group, state and changelogs), a fresh output
 * topic with the source's partition count, `threads` stream threads, exactly_once_v2.
 *
 * The clock, as close to amends' as the peer allows: amends counts the decisions after its
 * first commit over the time from the first to the last commit. The peer commits its output and
 * its source offsets in one transaction, so the harness reads its group's committed offsets every
 * `sampleEveryMs`: records/s = the records committed after the first reading that shows any ÷
 * the time from that reading to the one that shows the whole backlog. Each end is late by at
 * most one sampling interval. A backlog so small that one reading shows it all (the smoke
 * test's, in a single commit per stream thread) has no such span: then the clock runs from the
 * peer's RUNNING state (its partitions assigned) to that reading, over every record, and
 * `clock` says so.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest } from '../domain/config.js';
import type { BenchContext } from './bench-context.js';
import type { BenchProcess } from './bench-process.js';
import { type CommitSample, kstreamsPeerDir, PeerAdmin, startKstreamsPeer, waitForPeerDrain } from './kstreams-peer.js';

export interface KstreamsResult {
  rps: number;
  clock: 'first_to_last_commit' | 'running_to_drained';
  /** Records committed after the first reading that showed any, and the seconds they took. */
  records: number;
  seconds: number;
  threads: number;
  sample_every_ms: number;
  /** The JVM's VmHWM and its user + system CPU seconds over the whole run (start-up included). */
  peak_rss_mb: number;
  cpu_s: number;
  application_id: string;
  output_topic: string;
}

const sampleEveryMs = 100;
const reportEveryMs = 5_000;

export async function measureKstreams(
  ctx: BenchContext,
  source: Manifest,
  ends: ReadonlyMap<number, number>,
  threads: number,
): Promise<KstreamsResult> {
  const dir = kstreamsPeerDir();
  // A rebuild-style manifest: the same topic and configuration, the namespace the envelopes name.
  const { path } = ctx.rebuildManifest(source, 'kstreams');
  const applicationId = ctx.name('kstreams');
  const outputTopic = ctx.name('kstreams-out');
  const stateDir = join(ctx.runDir, 'kstreams-state');
  const endList = [...ends].sort(([a], [b]) => a - b).map(([, end]) => end);
  const total = endList.reduce((a, b) => a + b, 0);
  const admin = new PeerAdmin(ctx.brokers);
  let peer: BenchProcess | undefined;
  let runningAt: number | null = null;
  try {
    await admin.createTopic(outputTopic, endList.length);
    peer = ctx.track(
      startKstreamsPeer(dir, {
        ...{ brokers: ctx.brokers, manifestPath: path, applicationId, outputTopic, threads, stateDir },
        logPath: join(ctx.logsDir, `${applicationId}.log`),
        env: ctx.env,
        onStdoutLine: (line) => {
          if (runningAt === null && line === '{"state":"RUNNING"}') runningAt = Date.now();
        },
      }),
    );
    let lastReport = 0;
    const samples = await waitForPeerDrain(
      admin,
      peer,
      { applicationId, topic: source.source_topic, ends: endList, everyMs: sampleEveryMs, budgetMs: budgetMs(total) },
      (sample) => {
        if (Date.now() - lastReport < reportEveryMs && sample.committed < total) return;
        lastReport = Date.now();
        ctx.progress(`  kstreams: ${sample.committed.toLocaleString('en')} / ${total.toLocaleString('en')} committed`);
      },
    );
    const peak = peer.peakRssMb();
    const cpu = peer.cpuSeconds();
    await peer.stop();
    const span = commitSpan(samples, runningAt);
    return {
      ...{ rps: span.seconds > 0 ? span.records / span.seconds : 0, ...span },
      ...{ threads, sample_every_ms: sampleEveryMs, peak_rss_mb: peak, cpu_s: cpu },
      ...{ application_id: applicationId, output_topic: outputTopic },
    };
  } finally {
    admin.close();
    await peer?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** The records and seconds the rate divides, and which clock gave them (the header says why two). */
export function commitSpan(samples: readonly CommitSample[], runningAt: number | null) {
  const first = samples[0] ?? { at: 0, committed: 0 };
  const last = samples.at(-1) ?? first;
  if (samples.length >= 2) {
    const clock = 'first_to_last_commit' as const;
    return { clock, records: last.committed - first.committed, seconds: (last.at - first.at) / 1000 };
  }
  const seconds = runningAt === null ? 0 : (last.at - runningAt) / 1000;
  return { clock: 'running_to_drained' as const, records: last.committed, seconds };
}

/** As long as amends' batch-100 run may take (worker-throughput.ts), plus the JVM's start. */
function budgetMs(records: number): number {
  return 120_000 + (records / 2_000) * 1000;
}
