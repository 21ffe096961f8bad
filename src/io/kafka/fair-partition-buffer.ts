/**
 * Per-partition buffers between librdkafka's single consumer queue and the group's polls, so
 * that one worker takes its partitions in turns. Pure: the queue is reached through a
 * `QueueReader` (the source consumer's librdkafka calls; a model of them in tests).
 *
 * Why: librdkafka appends each partition's fetched record batches to one queue, whole (the
 * broker returns a record batch entire, whatever `max.partition.fetch.bytes` says), and a
 * backlog loaded quickly sits in batches of thousands of records. Measured on the local
 * stack: `consume(1)` over two backlogged partitions returned 6,336 records of partition 0
 * before the first of partition 1, with `max.partition.fetch.bytes` at 1 MiB and at 1 byte
 * alike; a worker at batch size 1 over two backlogs of 4,000 records decided only partition 0
 * in its first 5 s (317 records). So a poll reads ahead into these buffers and hands out one partition's records,
 * round robin. With several assigned, a partition whose buffer is full is paused in librdkafka, which drops its
 * queued records at once (they are fetched again from the consumer's position on resume), so
 * reading on reaches the other partitions' records queued behind them.
 *
 * Memory: each partition's share is two polls' worth of records (so the partition whose turn
 * it is has a whole batch while its refetch runs), at least `shareRecordsMin`, and at most its
 * even split of `bufferedRecordsMax`; and an even split of `bufferedBytesMax` bytes: a read
 * asks for no more records than fit in a share at the largest record size seen so far, so
 * only a record larger than any before can push a share past its bytes (by at most one read:
 * what librdkafka had queued).
 */

import { assertInvariant } from '../../kernel/invariant.js';
import type { SourceRecord } from '../../machines/ports.js';

/**
 * Records read ahead over all assigned partitions (the largest --batch-size). Measured with one
 * worker over two backlogged partitions at batch size 5000: 20,000 cost 15–35 MB of peak RSS
 * over no read-ahead, 10,000 about 10 MB, at the same records/s.
 */
export const bufferedRecordsMax = 10_000;
/** Key and value bytes read ahead over all assigned partitions. */
export const bufferedBytesMax = 8_388_608;
/**
 * A partition's share at least, even at batch size 1. A resume refetches the whole record batch
 * that holds the position (thousands of records), so a small share would refetch often; and
 * librdkafka picks a resume up only when its broker thread next wakes, up to 1 s later when no
 * other partition is fetching (measured: a resume 150 ms into an idle second waited 850 ms for
 * its first record, one 600 ms into it 400 ms), so the half share left at a resume must last
 * that long: 1,000 records is 1 s at 1,000 records/s.
 */
export const shareRecordsMin = 2_000;
/** A share holds this many polls' records: one to serve, one to serve while refetching. */
const pollsPerShare = 2;

export interface BufferLimits {
  records: number;
  bytes: number;
}

/** What a poll needs of the consumer queue. */
export interface QueueReader {
  /** Up to `maxRecords` queued records in queue order, waiting up to `waitMs` for the first. */
  read(maxRecords: number, waitMs: number): Promise<readonly SourceRecord[]>;
  /** Stop fetching these partitions and drop their queued records. */
  pause(partitions: readonly number[]): void;
  /** Fetch these partitions again, from after the last record read. */
  resume(partitions: readonly number[]): void;
}

/** One partition's read-ahead records, oldest first, and whether it is paused. */
interface PartitionQueue {
  records: SourceRecord[];
  /** Index of the oldest record not yet taken, so that a take is not O(buffered). */
  head: number;
  bytes: number;
  paused: boolean;
}

export class FairPartitionBuffer {
  private queues = new Map<number, PartitionQueue>();
  /** The partition served last: the next take starts after it. */
  private lastServed = -1;
  private share: BufferLimits = { records: 1, bytes: 1 };
  /** The even split of the limits over the assigned partitions: the most a share can be. */
  private split: BufferLimits = { records: 1, bytes: 1 };
  /** Key and value bytes of the largest record read since the last reset (at least 1). */
  private largestRecordBytes = 1;

  constructor(private readonly limits: BufferLimits = { records: bufferedRecordsMax, bytes: bufferedBytesMax }) {}

  /** A new assignment: nothing buffered, nothing paused, the limits split over `partitions`. */
  reset(partitions: readonly number[]): void {
    this.queues = new Map(partitions.map((p) => [p, { records: [], head: 0, bytes: 0, paused: false }]));
    this.lastServed = -1;
    this.largestRecordBytes = 1;
    const n = Math.max(1, partitions.length);
    this.split = {
      records: Math.max(1, Math.floor(this.limits.records / n)),
      bytes: Math.max(1, Math.floor(this.limits.bytes / n)),
    };
    this.share = { ...this.split };
  }

  /** The partitions paused now: librdkafka keeps them paused until told otherwise. */
  pausedPartitions(): number[] {
    return [...this.queues].filter(([, q]) => q.paused).map(([p]) => p);
  }

  /**
   * Up to `maxRecords` records of one partition: the next one after the last served, in
   * partition order, that has records. With k assigned partitions, each that has records is
   * served within k polls. Waits up to `firstWaitMs` only when nothing is buffered, so a
   * partition with records never waits on an idle one.
   */
  async poll(maxRecords: number, firstWaitMs: number, reader: QueueReader): Promise<SourceRecord[]> {
    const records = Math.max(shareRecordsMin, pollsPerShare * maxRecords);
    this.share = { records: Math.min(this.split.records, records), bytes: this.split.bytes };
    await this.readAhead(this.isEmpty() ? firstWaitMs : 0, reader);
    const taken = this.take(maxRecords);
    this.applyFlow(reader);
    return taken;
  }

  /**
   * Reads on while a read came back full and a fetching partition still has nothing: its
   * records may be queued behind another partition's, which the pause of a full buffer drops.
   * It ends: each full read adds to buffers that are bounded, and a full one is paused.
   */
  private async readAhead(firstWaitMs: number, reader: QueueReader): Promise<void> {
    for (let waitMs = firstWaitMs; ; waitMs = 0) {
      const room = this.readRoom();
      const read = await reader.read(room, waitMs);
      this.add(read);
      this.applyFlow(reader);
      if (read.length < room || !this.someFetchingEmpty()) return;
    }
  }

  /**
   * How many records a read may ask for without any fetching partition passing its share
   * (they may all be one partition's), in records and, at the largest size seen, in bytes.
   * At least 1: a read also serves rebalances, and with every partition paused it returns
   * nothing.
   */
  private readRoom(): number {
    let room = Number.POSITIVE_INFINITY;
    for (const q of this.queues.values()) {
      if (q.paused) continue;
      const bytesRoom = Math.floor((this.share.bytes - q.bytes) / this.largestRecordBytes);
      room = Math.min(room, this.share.records - size(q), bytesRoom);
    }
    return Number.isFinite(room) ? Math.max(1, room) : 1;
  }

  private someFetchingEmpty(): boolean {
    return [...this.queues.values()].some((q) => !q.paused && size(q) === 0);
  }

  private isEmpty(): boolean {
    return [...this.queues.values()].every((q) => size(q) === 0);
  }

  /** Appends records in read order (each partition's stay in offset order). */
  private add(records: readonly SourceRecord[]): void {
    for (const record of records) {
      const q = this.queues.get(record.partition);
      assertInvariant(q !== undefined, `read a record of partition ${record.partition}, not assigned`);
      assertInvariant(!q.paused, `read a record of partition ${record.partition} while it is paused`);
      const bytes = recordBytes(record);
      q.records.push(record);
      q.bytes += bytes;
      this.largestRecordBytes = Math.max(this.largestRecordBytes, bytes);
    }
  }

  private take(maxRecords: number): SourceRecord[] {
    const partition = this.nextToServe();
    if (partition === undefined) return [];
    const q = this.queues.get(partition) as PartitionQueue;
    const end = Math.min(q.records.length, q.head + maxRecords);
    const taken = q.records.slice(q.head, end);
    q.head = end;
    for (const record of taken) q.bytes -= recordBytes(record);
    // Drop the taken prefix once it is half the array: amortised O(1) per record, and taken
    // records are not kept alive by the array.
    if (q.head * 2 >= q.records.length) Object.assign(q, { records: q.records.slice(q.head), head: 0 });
    this.lastServed = partition;
    return taken;
  }

  private nextToServe(): number | undefined {
    const ready = [...this.queues].filter(([, q]) => size(q) > 0).map(([p]) => p);
    ready.sort((a, b) => a - b);
    return ready.find((p) => p > this.lastServed) ?? ready[0];
  }

  /**
   * Pauses partitions that reached their share; resumes paused ones drained to half of it, so
   * the refetch lands while the other half is served. A lone partition takes no turns and is
   * never paused: its reads already stop at its share (each poll asks for at most what the
   * last take freed), and a resume costs a refetch that librdkafka starts only at its broker
   * thread's next wake-up (measured: 2 workers at batch 500 decided 3,950 records/s while their
   * store calls allowed 13,000, polls waiting on refetches after every other pause).
   */
  private applyFlow(reader: QueueReader): void {
    const pause: number[] = [];
    const resume: number[] = [];
    const takesTurns = this.queues.size > 1;
    for (const [partition, q] of this.queues) {
      const full = takesTurns && (size(q) >= this.share.records || q.bytes >= this.share.bytes);
      const drained = size(q) <= this.share.records / 2 && q.bytes <= this.share.bytes / 2;
      if (!q.paused && full) pause.push(partition);
      if (q.paused && drained) resume.push(partition);
      q.paused = q.paused ? !drained : full;
    }
    if (pause.length > 0) reader.pause(pause);
    if (resume.length > 0) reader.resume(resume);
  }
}

function size(q: PartitionQueue): number {
  return q.records.length - q.head;
}

function recordBytes(record: SourceRecord): number {
  return (record.key?.byteLength ?? 0) + (record.value?.byteLength ?? 0);
}
