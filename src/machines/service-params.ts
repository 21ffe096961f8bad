/**
 * How a chart hands an invoked service's answer (or its failure) to a named guard or action:
 * as typed params, e.g. `guard: { type: 'sourceInvalid', params: observation }`. xstate types
 * `event.output` by the invoked service, so a mapper used after the wrong service does not
 * compile, and the guards and actions need no casts.
 */
import type { DoneActorEvent, ErrorActorEvent } from 'xstate';
import type { PartitionRow, ProcessOutcome, SourceObservation, SourceRecord } from './ports.js';

export type RowParams = { row: PartitionRow };
export type AnswerParams = { answer: ProcessOutcome };
export type ObservationParams = { observation: SourceObservation };
export type RecordsParams = { records: readonly SourceRecord[] };
export type FailureParams = { error: unknown };

/** A `claim` or `observe` answer: the partition's row. */
export function row({ event }: { event: DoneActorEvent<PartitionRow> }): RowParams {
  return { row: event.output };
}

/** A `claim` or `observe` answer, with the read that gave it (a rolled-back end names it). */
export function rowSeenBy<S extends string>(seen: S) {
  return ({ event }: { event: DoneActorEvent<PartitionRow> }): RowParams & { seen: S } => ({ row: event.output, seen });
}

/** A `process` answer. */
export function answer({ event }: { event: DoneActorEvent<ProcessOutcome> }): AnswerParams {
  return { answer: event.output };
}

/** An `observeSource` or `probe` answer. */
export function observation({ event }: { event: DoneActorEvent<SourceObservation> }): ObservationParams {
  return { observation: event.output };
}

/** A `poll` answer. */
export function records({ event }: { event: DoneActorEvent<readonly SourceRecord[]> }): RecordsParams {
  return { records: event.output };
}

/** Any service's failure. */
export function failure({ event }: { event: ErrorActorEvent }): FailureParams {
  return { error: event.error };
}
