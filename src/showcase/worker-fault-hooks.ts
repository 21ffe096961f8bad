/**
 * The worker's owned fault points (docs/design.md#showcase): set only by the showcase and
 * tests, so a fault hits its exact point instead of a lucky moment.
 *
 * The showcase's worker entry (src/cli/faultable-worker.ts) injects them around the store's
 * State; `amends worker` itself has none. With AMENDS_FAULT_CONTROL=stdin that worker reads one
 * JSON object per line from stdin, each arming one one-shot fault point:
 *
 *   {"fault":"pause-before-process","partition":0,"offset":812}
 *
 * `pause-before-process`: when a store `process` call is about to start whose records include
 * that offset of that partition — after the poll and its source observation, before the store
 * transaction begins — the worker logs `fault_point` and stops itself with SIGSTOP. The
 * controller decides what follows: SIGKILL (death while deciding), or SIGCONT after the group
 * has handed the partition on (a late process call, which the epoch must fence).
 *
 * Without the variable nothing is read and `State` is returned unwrapped.
 */
import { createInterface } from 'node:readline';
import type { JsonLog } from '../io/process/json-log.js';
import type { ProcessRequest, State } from '../machines/ports.js';

export const faultControlVariable = 'AMENDS_FAULT_CONTROL';
export const pauseBeforeProcess = 'pause-before-process';

export interface PausePoint {
  fault: typeof pauseBeforeProcess;
  partition: number;
  offset: number;
}

/** Parses one control line; a line that arms nothing is reported, never guessed at. */
export function parseFaultControlLine(line: string): PausePoint | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  const v = value as Partial<PausePoint> | null;
  if (v === null || typeof v !== 'object' || v.fault !== pauseBeforeProcess)
    return `unknown fault ${JSON.stringify(v?.fault)}`;
  if (!Number.isSafeInteger(v.partition) || (v.partition as number) < 0) return 'partition must be an integer ≥ 0';
  if (!Number.isSafeInteger(v.offset) || (v.offset as number) < 0) return 'offset must be an integer ≥ 0';
  return { fault: pauseBeforeProcess, partition: v.partition as number, offset: v.offset as number };
}

function hits(point: PausePoint, request: ProcessRequest): boolean {
  return request.partition === point.partition && request.records.some((r) => r.offset === point.offset);
}

export interface FaultHooks {
  state: State;
  close(): void;
}

export function withWorkerFaultHooks(
  state: State,
  env: NodeJS.ProcessEnv,
  log: JsonLog,
  input: NodeJS.ReadableStream & { unref?: () => void } = process.stdin,
): FaultHooks {
  if (env[faultControlVariable] !== 'stdin') return { state, close: () => {} };
  const armed: PausePoint[] = [];
  const lines = createInterface({ input });
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    const point = parseFaultControlLine(line);
    if (typeof point === 'string') {
      log.write('fault_control_rejected', { line, detail: point });
      return;
    }
    armed.push(point);
    log.write('fault_armed', { ...point });
  });
  // The control channel must never keep a finished worker alive.
  input.unref?.();
  return {
    state: {
      claim: (partition, signal) => state.claim(partition, signal),
      observe: (partition, signal) => state.observe(partition, signal),
      process(request, signal) {
        const index = armed.findIndex((p) => hits(p, request));
        if (index >= 0) {
          const [point] = armed.splice(index, 1);
          const first = request.records[0]?.offset ?? null;
          const last = request.records[request.records.length - 1]?.offset ?? null;
          log.write('fault_point', { ...point, epoch: request.epoch, first_offset: first, last_offset: last });
          // Synchronous: the process stops here, on this line, until SIGCONT (or SIGKILL).
          process.kill(process.pid, 'SIGSTOP');
          log.write('fault_resumed', { ...point, epoch: request.epoch });
        }
        return state.process(request, signal);
      },
    },
    close: () => lines.close(),
  };
}
