/**
 * What the showcase reads to place faults and to see recovery (docs/design.md#showcase):
 * the partitions' epochs and frontiers, who processes which partition (heartbeat rows), the
 * epoch each decision was written under, what the view ignored, and whether the whole
 * chain has drained (source ends, outbox, output ends). Read-only.
 */

import type { KafkaAdmin } from '../io/kafka/kafka-admin.js';
import { decodeWorkerBeat } from '../io/process/heartbeat.js';
import { inspectStore } from '../io/store/inspect-queries.js';
import { namespaceId } from '../io/store/namespace-registry.js';
import type { Queryable } from '../io/store/postgres.js';
import { type PartitionProgress, readPartitionProgress } from '../io/transport/chain-probe.js';
import { readViewPartitions } from '../io/transport/view-queries.js';
import { int8ToSafeInteger } from '../kernel/safe-integer.js';

export interface DrainState {
  decided: boolean;
  relayed: boolean;
  viewed: boolean;
  /** Source records still to decide, outbox rows to publish, output records to view. */
  behind: { decide: number; relay: number; view: number };
}

/** A heartbeat at most this old still says who processes a partition. */
const heartbeatFreshMs = 3_000;

export class ShowcaseProbe {
  /** The namespace's id, which keys decisions (migration 0006); read by the first look at them. */
  private nsId: number | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly admin: KafkaAdmin,
    private readonly namespace: string,
    private readonly topics: { source: string; output: string },
    private readonly partitionCount: number,
  ) {}

  async partitions(): Promise<Map<number, PartitionProgress>> {
    return new Map((await readPartitionProgress(this.db, this.namespace)).map((r) => [r.partition, r]));
  }

  /** The worker whose fresh heartbeat (from process `pid`) shows it processing `partition`, if any. */
  async processingOwner(partition: number, pids: ReadonlyMap<string, number>): Promise<string | undefined> {
    const result = await this.db.query<{ worker_id: string; pid: number; state: unknown }>(
      `SELECT worker_id, pid, state FROM worker_heartbeats
        WHERE namespace = $1 AND role = 'worker' AND heartbeat_at > now() - make_interval(secs => $2)`,
      [this.namespace, heartbeatFreshMs / 1000],
    );
    for (const row of result.rows) {
      if (pids.get(row.worker_id) !== row.pid) continue;
      const mine = decodeWorkerBeat(row.state).partitions.find((p) => p.partition === partition);
      if (mine?.state.startsWith('processing')) return row.worker_id;
    }
    return undefined;
  }

  /** How many decisions exist for the offset, and the epoch they were written under. */
  async decisionsAt(partition: number, offset: number): Promise<{ count: number; epochs: number[] }> {
    this.nsId ??= await namespaceId(this.db, this.namespace);
    const result = await this.db.query<{ epoch: string }>(
      'SELECT epoch FROM decisions WHERE ns = $1 AND partition = $2 AND record_offset = $3',
      [this.nsId, partition, offset],
    );
    return { count: result.rows.length, epochs: result.rows.map((r) => int8ToSafeInteger(r.epoch, 'epoch')) };
  }

  /** Records the view ignored: identical duplicates, and lower versions (stale) of a day it already holds newer. */
  async viewIgnored(): Promise<{ duplicate: number; stale: number }> {
    const rows = await readViewPartitions(this.db, this.namespace);
    return {
      duplicate: rows.reduce((sum, r) => sum + r.duplicate, 0),
      stale: rows.reduce((sum, r) => sum + r.stale, 0),
    };
  }

  async drain(): Promise<DrainState> {
    const all = [...Array(this.partitionCount).keys()];
    const [store, sourceEnds, outputEnds] = await Promise.all([
      inspectStore(this.db, this.namespace, 0),
      this.admin.listOffsets(this.topics.source, all, 'read-committed-end'),
      this.admin.listOffsets(this.topics.output, all, 'read-committed-end'),
    ]);
    let decide = 0;
    for (const p of all) {
      const frontier = store.partitions.find((r) => r.partition === p)?.frontier ?? 0;
      decide += Math.max(0, (sourceEnds.get(p) ?? 0) - frontier);
    }
    let view = 0;
    for (const p of all) {
      const frontier = store.view?.partitions.find((r) => r.partition === p)?.frontier ?? 0;
      view += Math.max(0, (outputEnds.get(p) ?? 0) - frontier);
    }
    const relay = store.outbox.pending;
    return { decided: decide === 0, relayed: relay === 0, viewed: view === 0, behind: { decide, relay, view } };
  }
}
