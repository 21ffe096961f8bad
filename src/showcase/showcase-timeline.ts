/**
 * The showcase's timeline (docs/design.md#showcase): progress notes, and each fault with
 * what was observed and when it recovered. Written as it happens to stderr (one line each,
 * time-stamped), or to the dashboard's timeline section under `--tui`; kept for the report.
 */
export interface FaultRecord {
  kind: string;
  target: string;
  injected_at: string;
  observed: string | null;
  recovered_at: string | null;
}

/** Where entries go as they happen: `text` without a time; `at` is when it happened. */
export type TimelineSink = (text: string, at: Date) => void;

export class ShowcaseTimeline {
  readonly faults: FaultRecord[] = [];
  readonly lines: string[] = [];
  private readonly startedAt = Date.now();

  constructor(private readonly sink: TimelineSink) {}

  /** A progress note: what the showcase is doing now. */
  note(text: string): void {
    this.emit(`  ${text}`);
  }

  /** A fault was injected at `injectedAt` (the child's own log time when it has one). */
  fault(kind: string, target: string, injectedAt: Date, text: string): FaultRecord {
    const record: FaultRecord = {
      kind,
      target,
      injected_at: injectedAt.toISOString(),
      observed: null,
      recovered_at: null,
    };
    this.faults.push(record);
    this.emit(`✗ ${kind}: ${text}`, injectedAt);
    return record;
  }

  /** The recovery the showcase saw for a fault. */
  recovered(record: FaultRecord, observed: string, at: Date): void {
    record.observed = observed;
    record.recovered_at = at.toISOString();
    const after = ((at.getTime() - Date.parse(record.injected_at)) / 1000).toFixed(2);
    this.emit(`✓ ${record.kind} recovered after ${after} s: ${observed}`, at);
  }

  private emit(text: string, at = new Date()): void {
    const since = ((at.getTime() - this.startedAt) / 1000).toFixed(1).padStart(6);
    this.lines.push(`+${since}s ${text}`);
    this.sink(text, at);
  }
}
