/**
 * The plain data the dashboard shows (docs/design.md#dashboard): what every component reads,
 * and nothing else. No I/O, no clock: the feeds (src/tui/dashboard-feed*.ts, the in-process
 * inspection feed) fill it through the store, and the components only render it.
 */

export interface DashboardHeader {
  namespace: string;
  sourceTopic: string;
  incarnation: string;
  brokers: string;
  /** host:port/database, never credentials (postgres.ts databaseTarget). */
  database: string;
  /** Where this process writes its JSON log lines while the screen is taken (worker --tui). */
  logFile: string | null;
  /** `amends tui` or `amends worker --tui <id>`: who is drawing. */
  mode: string;
}

/**
 * A partition's lifecycle as the dashboard knows it: the partition actor's state value as
 * text ("processing.deciding.committing"), or what the feed inferred when no actor exists:
 * "unassigned" (nobody owns it) or "retired"/"failed" (its owner's actor ended).
 */
export interface PartitionView {
  partition: number;
  state: string;
  owner: string | null;
  epoch: number | null;
  /**
   * The configuration revision in force from the frontier on (`amendsctl config-revise`,
   * PostgreSQL's partitions row); null until the database has been read.
   */
  configRevision: number | null;
  frontier: number | null;
  /** The broker's read-committed end; null when the broker is unreachable. */
  end: number | null;
  lag: number | null;
  /** The partition actor's last outcome (acknowledged, unknown, …) or the last work's outcomes. */
  lastOutcome: string | null;
  /** Records per second, from frontier deltas over the recent samples; null until two samples. */
  recordsPerSecond: number | null;
  /** Store attempts of the current operation (the actor's context). */
  attempts: number | null;
  /** The operation in flight (claim, seek, decide), when known. */
  operation: string | null;
  /** Time left of that operation's budget, as last reported (docs/design.md#unknown-outcomes). */
  deadlineInMs: number | null;
  /** Why the actor ended (retired/failed), when known. */
  endReason: string | null;
}

export interface WorkerView {
  id: string;
  role: string;
  pid: number;
  /** The group actor's state value as text, e.g. "running.polling", "stopped". */
  groupState: string;
  heartbeatAgeMs: number | null;
  /** True for the worker drawn from this process's own inspection stream. */
  local: boolean;
}

export interface RecentDecisionView {
  partition: number;
  offset: number;
  outcome: string;
  txn: string | null;
  rev: number | null;
}

/** One line of the fault timeline (the showcase's faults, or the local actors' events). */
export interface TimelineEntry {
  /** Milliseconds since the dashboard started. */
  atMs: number;
  text: string;
}

export interface DashboardData {
  header: DashboardHeader;
  partitions: PartitionView[];
  workers: WorkerView[];
  counts: Record<string, number>;
  quarantine: number | null;
  outbox: { pending: number; published: number } | null;
  /** The view's total lag; null until the transport (view) exists. */
  viewLag: number | null;
  recent: RecentDecisionView[];
  /** null hides the timeline section. */
  timeline: TimelineEntry[] | null;
  /** The feed's last error, one line (e.g. the database is unreachable); null when fine. */
  feedError: string | null;
  /** True once a feed has delivered anything. */
  loaded: boolean;
}

export interface DashboardUi {
  /** The selected partition number, or null when none is selected. */
  selected: number | null;
  help: boolean;
}

export interface DashboardSnapshot {
  data: DashboardData;
  ui: DashboardUi;
}

/** Bounded histories (docs/design.md#conventions: a limit on everything). */
export const recentDecisionsMax = 50;
export const timelineEntriesMax = 50;

export function emptyDashboardData(header: DashboardHeader): DashboardData {
  return {
    header,
    partitions: [],
    workers: [],
    counts: {},
    quarantine: null,
    outbox: null,
    viewLag: null,
    recent: [],
    timeline: null,
    feedError: null,
    loaded: false,
  };
}

/** A partition with nothing known but its number. */
export function blankPartition(partition: number): PartitionView {
  return {
    partition,
    state: 'unassigned',
    owner: null,
    epoch: null,
    configRevision: null,
    frontier: null,
    end: null,
    lag: null,
    lastOutcome: null,
    recordsPerSecond: null,
    attempts: null,
    operation: null,
    deadlineInMs: null,
    endReason: null,
  };
}
