/**
 * Wraps a `State` so each completed `process` attempt logs one `process_attempt` line
 * (docs/design.md#logs-and-exit; an acknowledged one at debug only). The elapsed time is the client's whole store call, COMMIT included;
 * recovery reads (observe) and retry waits happen outside it and are not counted; each
 * observation logs one `store_observed` line of its own.
 */

import { errorMessage } from '../../kernel/error-message.js';
import type { ProcessOutcome, ProcessRequest, State } from '../../machines/ports.js';
import { outcomeMayHaveCommitted } from '../../machines/ports.js';
import type { JsonLog, LogLevel } from '../process/json-log.js';

type Observation = 'acknowledged' | 'unknown' | 'fenced' | 'error';

/** What one process attempt observed: its outcome, or the kind of its failure. */
export function processObservation(result: ProcessOutcome | unknown): Observation {
  if (isProcessOutcome(result)) {
    // An unexpected frontier is a refusal like a fence: nothing was written.
    return result.kind === 'acknowledged' ? 'acknowledged' : 'fenced';
  }
  return outcomeMayHaveCommitted(result) ? 'unknown' : 'error';
}

function isProcessOutcome(result: unknown): result is ProcessOutcome {
  return typeof result === 'object' && result !== null && 'kind' in result && !(result instanceof Error);
}

/**
 * An acknowledged attempt is routine, so its line is debug (at batch 1 a line per record);
 * one that was fenced is info (ownership moved, as in any rebalance), and an unknown outcome
 * or an error warn. With debug off an acknowledged attempt builds no line at all.
 */
function attemptLevel(observation: Observation): LogLevel {
  if (observation === 'acknowledged') return 'debug';
  return observation === 'fenced' ? 'info' : 'warn';
}

/** The namespace is on every line already (bound to the process's log: json-log.ts). */
export function withProcessAttemptLog(state: State, log: JsonLog): State {
  const line = (request: ProcessRequest, started: bigint, observation: Observation, detail?: string) => {
    const level = attemptLevel(observation);
    if (!log.enabled(level)) return;
    const first = request.records[0];
    const last = request.records[request.records.length - 1];
    const fields = {
      partition: request.partition,
      first_offset: first?.offset ?? null,
      last_offset: last?.offset ?? null,
      records: request.records.length,
      epoch: request.epoch,
      storage_call_elapsed_ns: Number(process.hrtime.bigint() - started),
      observation,
    };
    log.write('process_attempt', detail === undefined ? fields : { ...fields, detail }, level);
  };
  return {
    claim: (partition, signal) => state.claim(partition, signal),
    // Observations are rare (seeking, and resolving an unknown outcome), so each is logged:
    // they are how an operator sees an unknown outcome resolved by re-observation.
    async observe(partition, signal) {
      const row = await state.observe(partition, signal);
      log.write('store_observed', { partition, epoch: row.epoch, frontier: row.frontier });
      return row;
    },
    async process(request: ProcessRequest, signal: AbortSignal): Promise<ProcessOutcome> {
      const started = process.hrtime.bigint();
      try {
        const outcome = await state.process(request, signal);
        const detail =
          outcome.kind === 'unexpected_frontier'
            ? `unexpected frontier ${outcome.frontier}`
            : outcome.kind === 'revision_lost'
              ? `configuration revision ${outcome.held} held, ${outcome.known} known`
              : undefined;
        line(request, started, processObservation(outcome), detail);
        return outcome;
      } catch (error) {
        line(request, started, processObservation(error), errorMessage(error));
        throw error;
      }
    },
  };
}
