/**
 * The source consumer's read-ahead buffers (src/io/kafka/fair-partition-buffer.ts) against a model of
 * librdkafka's consumer queue as measured on the local stack: one queue for all partitions,
 * filled by fetches that append whole runs (record batches) of each fetching partition; a
 * pause drops the partition's queued records at once and a resume fetches again from after
 * the last record read. The real queue is exercised in test/integration (kafka-source-consumer,
 * worker-fairness).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BufferLimits, FairPartitionBuffer, type QueueReader } from '../../src/io/kafka/fair-partition-buffer.js';
import type { SourceRecord } from '../../src/machines/ports.js';

interface ModelOptions {
  /** Records on the broker per partition (offsets 0..n-1), all visible from the start. */
  backlogs: readonly number[];
  /** Records per fetched run: a producer's record batch, which the broker never splits. */
  runLength: number;
  /** librdkafka's queued.min.messages: a fetch happens while the queue holds fewer. */
  queueMin: number;
  valueBytes?: number;
}

/** librdkafka's consumer queue, as far as the buffers can tell. */
class ModelQueue implements QueueReader {
  private queue: SourceRecord[] = [];
  private head = 0;
  readonly fetchAt: number[];
  readonly readTo: number[];
  readonly paused = new Set<number>();
  /** Calls, for the tests' figures. */
  reads = 0;
  readonly pauses: number[][] = [];
  readonly resumes: number[][] = [];
  private rotation = 0;

  constructor(private readonly options: ModelOptions) {
    this.fetchAt = options.backlogs.map(() => 0);
    this.readTo = options.backlogs.map(() => 0);
  }

  async read(maxRecords: number): Promise<readonly SourceRecord[]> {
    this.reads += 1;
    this.fetch();
    const out: SourceRecord[] = [];
    while (out.length < maxRecords && this.head < this.queue.length) {
      const record = this.queue[this.head++] as SourceRecord;
      if (this.paused.has(record.partition)) continue;
      out.push(record);
      this.readTo[record.partition] = record.offset + 1;
    }
    return out;
  }

  pause(partitions: readonly number[]): void {
    this.pauses.push([...partitions]);
    for (const p of partitions) {
      expect(this.paused.has(p), `pause of paused partition ${p}`).toBe(false);
      this.paused.add(p);
      this.fetchAt[p] = this.readTo[p] as number;
    }
    this.queue = this.queue.slice(this.head).filter((r) => !this.paused.has(r.partition));
    this.head = 0;
  }

  resume(partitions: readonly number[]): void {
    this.resumes.push([...partitions]);
    for (const p of partitions) {
      expect(this.paused.has(p), `resume of fetching partition ${p}`).toBe(true);
      this.paused.delete(p);
    }
  }

  /** One fetch response: a run of each fetching partition, starting at a rotating partition. */
  private fetch(): void {
    if (this.head > 0) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (this.queue.length >= this.options.queueMin) return;
    const n = this.options.backlogs.length;
    for (let i = 0; i < n; i++) {
      const p = (this.rotation + i) % n;
      if (this.paused.has(p)) continue;
      const end = Math.min(this.options.backlogs[p] as number, (this.fetchAt[p] as number) + this.options.runLength);
      for (let o = this.fetchAt[p] as number; o < end; o++) this.queue.push(record(p, o, this.options.valueBytes));
      this.fetchAt[p] = end;
    }
    this.rotation += 1;
  }
}

function record(partition: number, offset: number, valueBytes = 10): SourceRecord {
  return { partition, offset, key: new Uint8Array(2), value: new Uint8Array(valueBytes) };
}

interface RunFigures {
  served: number[][];
  /** Per poll, the partition served (-1: nothing). */
  order: number[];
  /** The longest run of polls a partition with records left waited. */
  longestWait: number;
  /** The most records buffered for one partition at any time. */
  mostBuffered: number;
  mostReadsPerPoll: number;
}

/** Polls until every record was served, checking the buffer bound after every read. */
async function drain(options: ModelOptions, limits: BufferLimits, batch: number): Promise<RunFigures> {
  const model = new ModelQueue(options);
  const buffer = new FairPartitionBuffer(limits);
  const partitions = options.backlogs.map((_, p) => p);
  buffer.reset(partitions);
  const served = partitions.map(() => [] as number[]);
  const waits = partitions.map(() => 0);
  const figures: RunFigures = { served, order: [], longestWait: 0, mostBuffered: 0, mostReadsPerPoll: 0 };
  const reader: QueueReader = {
    read: async (max, waitMs) => {
      const read = await model.read(max);
      for (const p of partitions) {
        const buffered = (model.readTo[p] as number) - (served[p] as number[]).length;
        figures.mostBuffered = Math.max(figures.mostBuffered, buffered);
      }
      expect(waitMs).toBeGreaterThanOrEqual(0);
      return read;
    },
    pause: (ps) => model.pause(ps),
    resume: (ps) => model.resume(ps),
  };
  const total = options.backlogs.reduce((a, b) => a + b, 0);
  for (let polls = 0, done = 0; done < total; polls++) {
    expect(polls, 'polls to drain the backlog').toBeLessThan(total * 2 + 10);
    const readsBefore = model.reads;
    const left = partitions.filter((p) => (served[p] as number[]).length < (options.backlogs[p] as number));
    const taken = await buffer.poll(batch, 250, reader);
    figures.mostReadsPerPoll = Math.max(figures.mostReadsPerPoll, model.reads - readsBefore);
    expect(taken.length).toBeLessThanOrEqual(batch);
    expect(new Set(taken.map((r) => r.partition)).size).toBeLessThanOrEqual(1);
    const partition = taken[0]?.partition ?? -1;
    figures.order.push(partition);
    for (const r of taken) (served[r.partition] as number[]).push(r.offset);
    done += taken.length;
    for (const p of left) {
      waits[p] = p === partition ? 0 : (waits[p] as number) + 1;
      figures.longestWait = Math.max(figures.longestWait, waits[p] as number);
    }
  }
  return figures;
}

const offsets = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('FairPartitionBuffer', () => {
  it('two backlogged partitions at batch size 1 take turns from the first poll (6,336-record runs, as measured)', async () => {
    const figures = await drain(
      { backlogs: [8_000, 8_000], runLength: 6_336, queueMin: 10_000 },
      { records: 20_000, bytes: 16_777_216 },
      1,
    );
    expect(figures.order.slice(0, 8)).toEqual([0, 1, 0, 1, 0, 1, 0, 1]);
    expect(figures.longestWait).toBe(1);
    expect(figures.served).toEqual([offsets(8_000), offsets(8_000)]);
  });

  it('a partition queued behind a long run of another is reached by pausing the full one', async () => {
    // Share of 100 records each; runs of 1,000: without the pause the second partition would
    // sit behind 1,000 records of the first.
    const model = new ModelQueue({ backlogs: [5_000, 5_000], runLength: 1_000, queueMin: 2_000 });
    const buffer = new FairPartitionBuffer({ records: 200, bytes: 1_000_000 });
    buffer.reset([0, 1]);
    const first = await buffer.poll(1, 250, model);
    const second = await buffer.poll(1, 250, model);
    expect([first[0]?.partition, second[0]?.partition]).toEqual([0, 1]);
    expect(model.pauses).toEqual([[0], [1]]);
    expect(buffer.pausedPartitions()).toEqual([0, 1]);
  });

  it('never pauses a lone partition, and keeps its buffer within its share', async () => {
    const figures = await drain(
      { backlogs: [1_000], runLength: 1_000, queueMin: 1 },
      { records: 10, bytes: 1_000_000 },
      3,
    );
    expect(figures.served).toEqual([offsets(1_000)]);
    expect(figures.mostBuffered).toBeLessThanOrEqual(10);
    const model = new ModelQueue({ backlogs: [1_000], runLength: 1_000, queueMin: 1 });
    const buffer = new FairPartitionBuffer({ records: 10, bytes: 1_000_000 });
    buffer.reset([0]);
    for (let i = 0; i < 50; i++) await buffer.poll(1, 250, model);
    expect([model.pauses, model.resumes]).toEqual([[], []]);
  });

  it('resumes a paused partition at half its share, and the queue goes on after the last record read', async () => {
    // Two assigned partitions (the second idle): the first takes turns, so it is paused when full.
    const model = new ModelQueue({ backlogs: [1_000, 0], runLength: 1_000, queueMin: 1 });
    const buffer = new FairPartitionBuffer({ records: 20, bytes: 1_000_000 });
    buffer.reset([0, 1]);
    const taken: number[] = [];
    for (let i = 0; i < 5; i++) taken.push(...(await buffer.poll(1, 250, model)).map((r) => r.offset));
    expect(model.pauses).toEqual([[0]]);
    expect(model.resumes).toEqual([[0]]); // after the 5th take, 5 of 10 left
    for (let i = 0; i < 20; i++) taken.push(...(await buffer.poll(1, 250, model)).map((r) => r.offset));
    expect(taken).toEqual(offsets(25));
  });

  it('reads no more than fits a share of the bytes limit at the largest record size seen', async () => {
    // 100-byte records (key 2 + value 98), 1,000 bytes a share: at most 10 records buffered
    // per partition, though the records limit would allow 500.
    const figures = await drain(
      { backlogs: [100, 100], runLength: 3, queueMin: 1, valueBytes: 98 },
      { records: 1_000, bytes: 2_000 },
      1,
    );
    expect(figures.mostBuffered).toBe(10);
    expect(figures.served).toEqual([offsets(100), offsets(100)]);
  });

  it('waits for a first record only when nothing is buffered', async () => {
    const waits: number[] = [];
    const model = new ModelQueue({ backlogs: [3], runLength: 3, queueMin: 1 });
    const buffer = new FairPartitionBuffer();
    buffer.reset([0]);
    const reader: QueueReader = {
      read: (max, waitMs) => {
        waits.push(waitMs);
        return model.read(max);
      },
      pause: (ps) => model.pause(ps),
      resume: (ps) => model.resume(ps),
    };
    for (let i = 0; i < 4; i++) await buffer.poll(1, 250, reader);
    // 1st poll: nothing buffered (reads 3); 2nd, 3rd: records buffered; 4th: empty again.
    expect(waits).toEqual([250, 0, 0, 250]);
  });

  it('reset forgets what was buffered and paused; a record of a partition not assigned is an invariant failure', async () => {
    const model = new ModelQueue({ backlogs: [50, 50], runLength: 50, queueMin: 1 });
    const buffer = new FairPartitionBuffer({ records: 20, bytes: 1_000_000 });
    buffer.reset([0, 1]);
    await buffer.poll(1, 250, model);
    expect(buffer.pausedPartitions()).toEqual([0, 1]);
    buffer.reset([1]);
    expect(buffer.pausedPartitions()).toEqual([]);
    const stray: QueueReader = { read: async () => [record(0, 0)], pause: () => {}, resume: () => {} };
    await expect(buffer.poll(1, 250, stray)).rejects.toThrow(/partition 0, not assigned/);
  });

  it('property: every record once and in order, no partition with records waits more than one round, bounded buffers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 20 }),
        async (backlogs, runLength, queueMin, recordsLimit, batch) => {
          const limits = { records: recordsLimit, bytes: 1_000_000 };
          const figures = await drain({ backlogs, runLength, queueMin }, limits, batch);
          expect(figures.served).toEqual(backlogs.map(offsets));
          expect(figures.longestWait).toBeLessThanOrEqual(backlogs.length - 1);
          const share = Math.max(1, Math.floor(recordsLimit / backlogs.length));
          expect(figures.mostBuffered).toBeLessThanOrEqual(share);
          expect(figures.mostReadsPerPoll).toBeLessThanOrEqual(64);
        },
      ),
      { numRuns: 300 },
    );
  });
});
