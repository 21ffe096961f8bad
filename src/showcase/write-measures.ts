/**
 * The write measurements of the chaos run's database faults (issue 33), fed by the write probe
 * (write-probe.ts) and free of I/O. A fault opens one when it strikes:
 *
 *   first commit   the probe's first commit after it: on a node other than the primary of
 *                  before, for a failover; after the stop completed, for a single node's crash
 *   longest gap    the longest pause between two probe commits, from the last one before the
 *                  fault to that first one: what writers really waited (a switchover's old
 *                  primary takes writes until it is demoted)
 *   amends' first  the first time the namespace's decided frontier, read after the probe's
 *                  first commit on the new primary, has grown: a worker's batch committed by
 *                  that node, not one replicated from the old primary. A worker commit in the
 *                  same 100 ms as the probe's first can be missed; the next one is then taken.
 *
 * Memory is one object per open measurement: nothing is kept per commit.
 */
export interface WriteMeasure {
  /** Fault → the first commit after it (on another node than the primary of before, for a failover). */
  first_commit_s: number | null;
  /** The node's PostgreSQL port that made it. */
  first_commit_port: number | null;
  /** The longest pause between two commits, from the last one before the fault to that first one. */
  longest_gap_s: number | null;
  /** Fault → the first commit of an amends worker on that node. */
  amends_first_commit_s: number | null;
}

export interface MeasureFrom {
  /** When the fault struck (ms since the epoch). */
  struckMs: number;
  /** A commit counts only at or after this time (a crash's stop has completed). */
  afterMs?: number;
  /** A commit counts only on another port (the primary of before). */
  notPort?: number;
}

interface OpenMeasure {
  from: MeasureFrom;
  result: WriteMeasure;
  /** The probe's last commit before the fault. */
  lastCommitMs: number | null;
  gapMs: number;
  /** The decided frontier the probe read right after its first commit on the new node. */
  frontierAtFirst: number | null;
}

/** The open measurements: each closes once amends' first commit is seen (or never, at the run's end). */
export class WriteMeasures {
  private readonly measures = new Set<OpenMeasure>();
  private lastCommitMs: number | null = null;

  open(from: MeasureFrom): WriteMeasure {
    const result: WriteMeasure = {
      first_commit_s: null,
      first_commit_port: null,
      longest_gap_s: null,
      amends_first_commit_s: null,
    };
    this.measures.add({ from, result, lastCommitMs: this.lastCommitMs, gapMs: 0, frontierAtFirst: null });
    return result;
  }

  /** A probe commit acknowledged at `at` by the node on `port`. */
  committed(at: number, port: number): void {
    for (const m of this.measures) {
      if (m.result.first_commit_port !== null) continue;
      if (m.lastCommitMs !== null) m.gapMs = Math.max(m.gapMs, at - m.lastCommitMs);
      m.lastCommitMs = at;
      if (at < (m.from.afterMs ?? m.from.struckMs) || port === m.from.notPort) continue;
      m.result.first_commit_s = seconds(at - m.from.struckMs);
      m.result.first_commit_port = port;
      m.result.longest_gap_s = seconds(m.gapMs);
    }
    this.lastCommitMs = at;
  }

  /** Whether a measurement has its first commit and waits for amends' (the probe reads the frontier only then). */
  awaitingAmends(): boolean {
    return [...this.measures].some((m) => m.result.first_commit_port !== null);
  }

  /** The decided frontier as read at `at`, on the node of the last commit. */
  frontierRead(at: number, frontier: number): void {
    for (const m of this.measures) {
      if (m.result.first_commit_port === null) continue;
      if (m.frontierAtFirst === null) m.frontierAtFirst = frontier;
      else if (frontier > m.frontierAtFirst) {
        m.result.amends_first_commit_s = seconds(at - m.from.struckMs);
        this.measures.delete(m);
      }
    }
  }
}

function seconds(ms: number): number {
  return ms / 1000;
}
