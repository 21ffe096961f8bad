/**
 * The memory broker of the simulation: the topic's partitions and an eager `range` group
 * coordinator (worker.md §3). As with librdkafka (library-notes.md), rebalance callbacks are
 * served inside a member's poll, and the coordinator waits for every member holding partitions
 * to unassign before it hands out the next assignment.
 */
import type { SourceRecord } from '../../src/machines/ports.js';
import type { SimTopic } from './sim-history.js';

export interface ConsumerSession {
  member: number;
  /** none → (assign callback served) assigning → (assign() called) assigned → (unassign()) none */
  status: 'none' | 'assigning' | 'assigned';
  /** The next offset to fetch per assigned partition. */
  positions: Map<number, number>;
  pendingRevoke: boolean;
  pendingAssign: number[] | null;
  /** The coordinator expired this session while the member lived on (its revoke says lost). */
  lost: boolean;
}

export class MemoryBroker {
  private readonly sessions: ConsumerSession[] = [];
  private readonly waiting = new Set<ConsumerSession>();
  private revoking = false;
  rebalances = 0;
  /** Called when a revocation becomes pending: the world may deliver it outside a poll. */
  onRevokePending: (session: ConsumerSession) => void = () => {};

  /** Per partition: how many of its records producers have committed so far. */
  private readonly visible: number[];

  constructor(
    readonly topic: SimTopic,
    initiallyVisible: (partition: number, total: number) => number,
  ) {
    this.visible = topic.records.map((records, p) => initiallyVisible(p, records.length));
  }

  /** A producer commits the next record of a partition; false when all are visible. */
  reveal(partition: number): boolean {
    const total = this.topic.records[partition]?.length ?? 0;
    const visible = this.visible[partition] ?? 0;
    if (visible >= total) return false;
    this.visible[partition] = visible + 1;
    return true;
  }

  revealAll(): void {
    this.topic.records.forEach((records, p) => {
      this.visible[p] = records.length;
    });
  }

  /** The read-committed end: an open transaction's first record holds it back (the LSO). */
  readCommittedEnd(partition: number): number {
    const records = this.topic.records[partition] ?? [];
    const visible = this.visible[partition] ?? 0;
    return visible >= records.length ? (this.topic.ends[partition] ?? 0) : (records[visible]?.offset ?? 0);
  }

  join(member: number): ConsumerSession {
    const session: ConsumerSession = {
      member,
      status: 'none',
      positions: new Map(),
      pendingRevoke: false,
      pendingAssign: null,
      lost: false,
    };
    this.sessions.push(session);
    this.rebalance();
    return session;
  }

  /** A clean leave (close) or a session expiry (crash). */
  leave(session: ConsumerSession): void {
    const index = this.sessions.indexOf(session);
    if (index < 0) return;
    this.sessions.splice(index, 1);
    this.waiting.delete(session);
    session.pendingAssign = null;
    session.pendingRevoke = false;
    this.rebalance();
  }

  /** The session expires (e.g. a long pause): the others rebalance; the member learns it in a poll. */
  expire(session: ConsumerSession): void {
    this.leave(session);
    session.lost = true;
    session.pendingRevoke = true;
  }

  rebalance(): void {
    this.rebalances++;
    this.revoking = true;
    for (const s of this.sessions) {
      s.pendingAssign = null;
      if (s.status !== 'none') {
        this.waiting.add(s);
        if (!s.pendingRevoke) {
          s.pendingRevoke = true;
          this.onRevokePending(s);
        }
      }
    }
    this.completeIfReleased();
  }

  assigned(session: ConsumerSession, positions: readonly { partition: number; offset: number }[]): void {
    session.status = 'assigned';
    session.positions = new Map(positions.map((p) => [p.partition, p.offset]));
  }

  unassigned(session: ConsumerSession): void {
    session.status = 'none';
    session.positions = new Map();
    this.waiting.delete(session);
    this.completeIfReleased();
  }

  private completeIfReleased(): void {
    if (!this.revoking || this.waiting.size > 0) return;
    this.revoking = false;
    // Range assignment: partitions in order, split into contiguous runs over the members.
    const members = [...this.sessions].sort((a, b) => a.member - b.member);
    const partitions = this.topic.records.length;
    let next = 0;
    members.forEach((s, i) => {
      const count = Math.floor(partitions / members.length) + (i < partitions % members.length ? 1 : 0);
      s.pendingAssign = Array.from({ length: count }, (_, k) => next + k);
      next += count;
    });
  }

  /** Up to `max` records from the session's positions, partitions in order. */
  fetch(session: ConsumerSession, max: number): SourceRecord[] {
    const out: SourceRecord[] = [];
    for (const [partition, position] of [...session.positions].sort((a, b) => a[0] - b[0])) {
      const records = (this.topic.records[partition] ?? []).slice(0, this.visible[partition] ?? 0);
      let pos = position;
      for (const record of records) {
        if (out.length >= max) break;
        if (record.offset < pos) continue;
        out.push(record);
        pos = record.offset + 1;
      }
      session.positions.set(partition, pos);
      if (out.length >= max) break;
    }
    return out;
  }
}
