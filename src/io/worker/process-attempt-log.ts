/**
 * Wraps a `State` so each completed `process` attempt logs one `process_attempt` line
 * (docs/design.md#logs-and-exit). The elapsed time is the client's whole store call, COMMIT included;
 * recovery reads (observe) and retry waits happen outside it and are not counted; each
 * observation logs one `store_observed` line of its own.
 */

import { errorMessage } from '../../kernel/error-message.js';
import type { ProcessOutcome, ProcessRequest, State } from '../../machines/ports.js';
import { outcomeMayHaveCommitted } from '../../machines/ports.js';
import type { JsonLog } from '../process/json-log.js';

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

export function withProcessAttemptLog(state: State, namespace: string, log: JsonLog): State {
  return {
    claim: (partition, signal) => state.claim(partition, signal),
    // Observations are rare (seeking, and resolving an unknown outcome), so each is logged:
    // they are how an operator sees an unknown outcome resolved by re-observation.
    async observe(partition, signal) {
      const row = await state.observe(partition, signal);
      log.write('store_observed', { namespace, partition, epoch: row.epoch, frontier: row.frontier });
      return row;
    },
    async process(request: ProcessRequest, signal: AbortSignal): Promise<ProcessOutcome> {
      const first = request.records[0];
      const last = request.records[request.records.length - 1];
      const fields = {
        namespace,
        partition: request.partition,
        first_offset: first?.offset ?? null,
        last_offset: last?.offset ?? null,
        records: request.records.length,
        epoch: request.epoch,
      };
      const started = process.hrtime.bigint();
      const elapsed = () => Number(process.hrtime.bigint() - started);
      try {
        const outcome = await state.process(request, signal);
        log.write('process_attempt', {
          ...fields,
          storage_call_elapsed_ns: elapsed(),
          observation: processObservation(outcome),
          ...(outcome.kind === 'unexpected_frontier' ? { detail: `unexpected frontier ${outcome.frontier}` } : {}),
        });
        return outcome;
      } catch (error) {
        log.write('process_attempt', {
          ...fields,
          storage_call_elapsed_ns: elapsed(),
          observation: processObservation(error),
          detail: errorMessage(error),
        });
        throw error;
      }
    },
  };
}
