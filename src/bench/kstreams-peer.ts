/**
 * The Kafka Streams peer (peers/kstreams; docs/benchmarks.md, "The Kafka Streams peer"): a real
 * Kafka Streams application, exactly_once_v2, that derives amends' decisions and output versions
 * into an output topic. This module finds its build (scripts/kstreams-peer.sh builds it once per
 * version of its sources into the cache), starts it as a child JVM, and tells how far it got:
 * its consumer group (the application id) commits the source offsets in the same transaction as
 * its output, so a committed offset is a committed output.
 *
 * The full run measures it after amends' sweep on the same backlog and broker
 * (`measureKstreams`); test/integration/kstreams-peer.test.ts checks its output against
 * `amendsctl simulate`.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RdKafka } from '@confluentinc/kafka-javascript';
import { packageRoot } from '../io/process/child-process.js';
import { BenchProcess } from './bench-process.js';

const peerMainClass = 'dev.amends.kstreams.LedgerPeer';
const adminTimeoutMs = 10_000;

/** The directory holding peer.jar and lib/, built first when this version of the peer was never built here. */
export function kstreamsPeerDir(): string {
  const r = spawnSync('bash', [join(packageRoot, 'scripts', 'kstreams-peer.sh'), 'path'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr.trim() || `scripts/kstreams-peer.sh exited ${r.status}`);
  return r.stdout.trim();
}

export interface PeerOptions {
  brokers: string;
  manifestPath: string;
  /** Kafka Streams' application id: its consumer group, transactional ids and internal topics' prefix. */
  applicationId: string;
  /** Must exist with the source's partition count. */
  outputTopic: string;
  /** `num.stream.threads`. */
  threads: number;
  stateDir: string;
  /** Also write every decision, as `amendsctl export` prints it, to this topic (the test does). */
  decisionsTopic?: string;
  logPath: string;
  env: NodeJS.ProcessEnv;
  /** Its stdout lines: one JSON line per Kafka Streams state change, `{"state":"RUNNING"}`. */
  onStdoutLine?: (line: string) => void;
}

/**
 * Starts the peer's JVM itself (not a wrapper script), so the child's VmHWM and CPU time are the
 * JVM's. `AMENDS_KSTREAMS_JVM_OPTS` adds JVM options (none by default: the JVM's own heap sizing).
 */
export function startKstreamsPeer(dir: string, o: PeerOptions): BenchProcess {
  const jvmOptions = (o.env.AMENDS_KSTREAMS_JVM_OPTS ?? '').split(/\s+/).filter((s) => s !== '');
  const flags = [
    ...['--brokers', o.brokers, '--manifest', o.manifestPath, '--application-id', o.applicationId],
    ...['--output-topic', o.outputTopic, '--threads', String(o.threads), '--state-dir', o.stateDir],
    ...(o.decisionsTopic === undefined ? [] : ['--decisions-topic', o.decisionsTopic]),
  ];
  return new BenchProcess({
    name: o.applicationId,
    command: 'java',
    args: [...jvmOptions, '-cp', `${join(dir, 'peer.jar')}:${join(dir, 'lib', '*')}`, peerMainClass, ...flags],
    env: o.env,
    logPath: o.logPath,
    ...(o.onStdoutLine === undefined ? {} : { onStdoutLine: o.onStdoutLine }),
  });
}

function call<T>(start: (done: (error: unknown, result?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => start((e, r) => (e ? reject(e) : resolve(r as T))));
}

/** The admin calls around a peer run: its output topic, and its group's committed source offsets. */
export class PeerAdmin {
  private readonly admin: RdKafka.IAdminClient;

  constructor(brokers: string) {
    this.admin = RdKafka.AdminClient.create({ 'bootstrap.servers': brokers, 'client.id': 'amends-bench-kstreams' });
  }

  createTopic(topic: string, partitions: number): Promise<void> {
    return call<void>((done) =>
      this.admin.createTopic({ topic, num_partitions: partitions, replication_factor: 1 }, adminTimeoutMs, done),
    );
  }

  /** The group's committed offset of each partition 0..partitions-1 of `topic` (0 where none yet). */
  async committed(groupId: string, topic: string, partitions: number): Promise<number[]> {
    const wanted = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    const [result] = await call<RdKafka.GroupResults[]>((done) =>
      this.admin.listConsumerGroupOffsets([{ groupId, partitions: wanted }], { timeout: adminTimeoutMs }, done),
    );
    return wanted.map(({ partition }) => {
      const found = result?.partitions.find((p) => p.topic === topic && p.partition === partition);
      return found === undefined || found.offset < 0 ? 0 : found.offset;
    });
  }

  close(): void {
    this.admin.disconnect();
  }
}

/** One reading of the group's committed offsets: when, and how many source records they cover. */
export interface CommitSample {
  at: number;
  committed: number;
}

/**
 * Polls the peer's committed offsets every `everyMs` until every partition's reaches its end,
 * and returns every reading in which the count moved (the first and the last bound the clock).
 * Fails when the peer exits first or `budgetMs` passes.
 */
export async function waitForPeerDrain(
  admin: PeerAdmin,
  peer: BenchProcess,
  o: { applicationId: string; topic: string; ends: readonly number[]; everyMs: number; budgetMs: number },
  onSample?: (sample: CommitSample, total: number) => void,
): Promise<CommitSample[]> {
  const total = o.ends.reduce((a, b) => a + b, 0);
  const started = Date.now();
  const samples: CommitSample[] = [];
  for (;;) {
    const offsets = await admin.committed(o.applicationId, o.topic, o.ends.length);
    const sample = { at: Date.now(), committed: offsets.reduce((a, b) => a + b, 0) };
    if (sample.committed > (samples.at(-1)?.committed ?? 0)) {
      samples.push(sample);
      onSample?.(sample, total);
    }
    if (offsets.every((offset, p) => offset >= (o.ends[p] ?? 0))) return samples;
    if (!peer.running) throw new Error(`the Kafka Streams peer exited early (see ${peer.name}'s log)`);
    if (Date.now() - started > o.budgetMs) {
      throw new Error(
        `the Kafka Streams peer committed ${sample.committed} of ${total} records in ${o.budgetMs / 1000} s`,
      );
    }
    await sleep(o.everyMs);
  }
}
