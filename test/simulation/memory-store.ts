/**
 * The memory store of the simulation: worker.md §5's partition rows, with the domain engine
 * deciding each batch inside one all-or-nothing "transaction". Its methods are the durable
 * effects only; the world (sim-world.ts) decides when they run and which reply, if any, the
 * caller gets. Every commit is checked here, where the data is written.
 */
import type { NamespaceConfig } from '../../src/domain/config.js';
import { decide } from '../../src/domain/decide.js';
import type { Decision } from '../../src/domain/decision.js';
import { type LedgerState, restoreKeyState, snapshotKeyState } from '../../src/domain/ledger-state.js';
import type { OutputVersion } from '../../src/domain/output-version.js';
import type { PartitionRow, ProcessOutcome, ProcessRequest } from '../../src/machines/ports.js';

interface Row extends PartitionRow {
  ledger: LedgerState;
  /** The epoch of every commit, in order: never decreasing. */
  commitEpochs: number[];
}

export interface CommittedDecision {
  decision: Decision;
  epoch: number;
}

function cloneLedger(ledger: LedgerState): LedgerState {
  return new Map([...ledger].map(([key, state]) => [key, restoreKeyState(snapshotKeyState(state))]));
}

export class MemoryStore {
  private readonly rows: Row[];
  /** Per partition: offset → the one decision committed for it. */
  readonly decisions: Map<number, CommittedDecision>[];
  readonly versions: OutputVersion[] = [];
  readonly violations: string[] = [];

  constructor(private readonly config: NamespaceConfig) {
    this.rows = Array.from({ length: config.partitions }, () => ({
      epoch: 0,
      frontier: 0,
      ledger: new Map(),
      commitEpochs: [],
    }));
    this.decisions = this.rows.map(() => new Map());
  }

  private row(partition: number): Row {
    const row = this.rows[partition];
    if (row === undefined) throw new Error(`no partition ${partition}`);
    return row;
  }

  /** Increments the epoch under the row lock (worker.md §4.1). */
  claim(partition: number): PartitionRow {
    const row = this.row(partition);
    row.epoch += 1;
    return { epoch: row.epoch, frontier: row.frontier };
  }

  observe(partition: number): PartitionRow {
    const row = this.row(partition);
    return { epoch: row.epoch, frontier: row.frontier };
  }

  /** One transaction: fence, frontier check, then every decision of the batch or none. */
  process(request: ProcessRequest): ProcessOutcome {
    const row = this.row(request.partition);
    if (request.epoch !== row.epoch) return { kind: 'fenced', epoch: row.epoch };
    if (request.expectedFrontier !== row.frontier) return { kind: 'unexpected_frontier', frontier: row.frontier };
    const ledger = cloneLedger(row.ledger);
    const decided = this.decisions[request.partition] ?? new Map<number, CommittedDecision>();
    const committed: CommittedDecision[] = [];
    const versions: OutputVersion[] = [];
    let previous = row.frontier - 1;
    for (const record of request.records) {
      if (record.partition !== request.partition || record.offset <= previous) {
        this.violations.push(`p${request.partition}: batch out of order at offset ${record.offset}`);
      }
      previous = record.offset;
      // Exactly one decision per offset: checked where it is written.
      if (decided.has(record.offset)) {
        this.violations.push(`p${request.partition}@${record.offset}: decided twice`);
      }
      const result = decide(record, this.config, ledger);
      committed.push({ decision: result.decision, epoch: request.epoch });
      versions.push(...result.newVersions);
    }
    const last = request.records[request.records.length - 1];
    if (last === undefined) throw new Error('an empty batch');
    const lastEpoch = row.commitEpochs[row.commitEpochs.length - 1] ?? 0;
    if (request.epoch < lastEpoch)
      this.violations.push(`p${request.partition}: commit under stale epoch ${request.epoch}`);
    // COMMIT: everything at once.
    row.ledger = ledger;
    row.frontier = last.offset + 1;
    row.commitEpochs.push(request.epoch);
    for (const c of committed) decided.set(c.decision.offset, c);
    this.versions.push(...versions);
    return { kind: 'acknowledged', frontier: row.frontier };
  }

  frontiers(): number[] {
    return this.rows.map((r) => r.frontier);
  }

  allDecisions(): Decision[] {
    return this.decisions.flatMap((m) => [...m.values()].map((c) => c.decision));
  }
}
