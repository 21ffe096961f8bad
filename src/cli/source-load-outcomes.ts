/**
 * What became of each line `amendsctl source-load` queued (docs/design.md#source-load), and the
 * one line that says so at the end: the first failed line, a lost producer guard, or an
 * interruption (SIGINT/SIGTERM) with the last line known published and how to go on.
 *
 * Why rerunning is safe (docs/operations.md, "Stopping a load"): a line republished after it
 * was published lands after its first copy on the same partition (its key decides the
 * partition), so the worker decides the copy after the original. The original was APPLIED
 * only with a revision above the transaction's current one, after which the current
 * revision is at least its own; so the copy is DUPLICATE (same revision and content), STALE
 * (a higher revision came since) or quarantined as the original was, and changes no balance.
 * Only APPLIED changes authority, so the lines after it are decided as in one load.
 */

import type { EncodedFixtureLine } from '../domain/fixture-line.js';
import type { Delivery, PublicationError } from '../io/kafka/source-producer.js';
import type { ProducerGuard } from '../io/store/producer-guard.js';
import type { Progress } from './progress-bar.js';

export type LineOutcome = { delivered: Delivery } | { error: PublicationError };

/**
 * Every line gets exactly one outcome; the first error stops further queuing (lines already
 * queued still settle, bounded by the delivery timeout). Coordinates appear in file order: a
 * line is printed once it and every line before it have an outcome (failed lines print
 * nothing on stdout; the diagnostic names them).
 */
export class LoadOutcomes {
  readonly outcomes: (LineOutcome | undefined)[];
  /** Why queuing stopped early, if it did. */
  stopReason: string | undefined;
  /**
   * The first line (file order) acknowledged once the guard's loss was known: from there on
   * the load published without the guard, so a verify may have compared meanwhile.
   */
  firstUnguarded: number | undefined;
  private completed = 0;
  private printed = 0;

  constructor(
    private readonly lines: readonly EncodedFixtureLine[],
    private readonly guard: ProducerGuard,
    private readonly progress: Progress,
  ) {
    this.outcomes = new Array(lines.length).fill(undefined);
  }

  settle(i: number, outcome: LineOutcome): void {
    this.outcomes[i] = outcome;
    if (this.guard.lost !== undefined && 'delivered' in outcome) {
      this.firstUnguarded = Math.min(this.firstUnguarded ?? i, i);
    }
    if ('error' in outcome) this.stopReason ??= `line ${this.lines[i]!.line} was not published`;
    this.completed++;
    this.progress.update(this.completed);
    this.printReady();
  }

  printReady(): void {
    while (this.printed < this.lines.length) {
      const outcome = this.outcomes[this.printed];
      if (outcome === undefined) break;
      const line = this.lines[this.printed]!;
      if ('delivered' in outcome) {
        this.progress.printLine(
          `line ${line.line} -> partition ${outcome.delivered.partition} offset ${outcome.delivered.offset}`,
        );
      }
      this.printed++;
    }
  }
}

/** What became of the producer guard during a load: lost (why), and from which line on. */
export interface GuardDuringLoad {
  lost: string | undefined;
  /** The first line acknowledged after the loss was known, if any. */
  firstUnguardedLine: number | undefined;
}

interface Tally {
  delivered: number;
  failed: number;
  unknown: number;
  notSent: number;
  first: { line: number; error: PublicationError } | undefined;
}

function tally(lines: readonly EncodedFixtureLine[], outcomes: readonly (LineOutcome | undefined)[]): Tally {
  const t: Tally = { delivered: 0, failed: 0, unknown: 0, notSent: 0, first: undefined };
  outcomes.forEach((outcome, i) => {
    if (outcome === undefined) t.notSent++;
    else if ('delivered' in outcome) t.delivered++;
    else {
      if (outcome.error.kind === 'unknown') t.unknown++;
      else t.failed++;
      t.first ??= { line: lines[i]!.line, error: outcome.error };
    }
  });
  return t;
}

const rerunSafety =
  'rerunning the whole file is safe too: the worker decides each line published twice as DUPLICATE or STALE (or quarantines it again), so no balance changes';

/**
 * One line naming the first failed or unknown line (file order) and what happened to the rest;
 * or, when every line was acknowledged but the guard was lost on the way (even after the last
 * line was queued), which lines were published without it.
 */
export function summarizeFailures(
  lines: readonly EncodedFixtureLine[],
  outcomes: readonly (LineOutcome | undefined)[],
  guard: GuardDuringLoad,
): string | undefined {
  const guardLost = guard.lost;
  const t = tally(lines, outcomes);
  if (t.first === undefined && t.notSent === 0) {
    if (guardLost === undefined) return undefined;
    const unguarded =
      guard.firstUnguardedLine === undefined
        ? 'each before the loss was noticed, but the guard was gone before the producer had closed'
        : `lines from ${guard.firstUnguardedLine} on after the loss was noticed`;
    return `the producer guard was lost (${guardLost}): all ${lines.length} lines were acknowledged, ${unguarded}, so a verify may have compared while they were published; run verify again`;
  }
  const counts = `${t.delivered} of ${lines.length} lines acknowledged, ${t.failed} failed, ${t.unknown} unknown, ${t.notSent} not sent`;
  const resume = resumeAdvice(lines, outcomes);
  if (t.first !== undefined) {
    const what = t.first.error.kind === 'unknown' ? 'publication outcome is unknown' : 'publication failed';
    return `line ${t.first.line}: ${what}: ${t.first.error.message} (${counts}); ${resume}; ${rerunSafety}`;
  }
  const why = guardLost ? `the producer guard was lost (${guardLost})` : 'lines were left unsent';
  return `the load stopped early: ${why} (${counts}); ${resume}; ${rerunSafety}`;
}

/**
 * The line after an interruption: where the load stopped, the last line known published
 * (every line up to it acknowledged), what became of the lines after it, and how to go on.
 * `flushed` is false when a second signal ended the wait for the lines in flight.
 */
export function interruptionReport(
  signal: NodeJS.Signals,
  lines: readonly EncodedFixtureLine[],
  outcomes: readonly (LineOutcome | undefined)[],
  guardLost: string | undefined,
  flushed = true,
): string {
  const t = tally(lines, outcomes);
  const prefix = acknowledgedPrefix(outcomes);
  const first = lines[0]!.line;
  const last = lines[lines.length - 1]!.line;
  const lastKnown = prefix === 0 ? undefined : lines[prefix - 1]!.line;
  const known =
    lastKnown === undefined
      ? `no line of ${first}-${last} is known published`
      : `${lastKnown === first ? `line ${first}` : `lines ${first}-${lastKnown}`} of ${first}-${last} ${lastKnown === first ? 'is' : 'are'} published (the last line known published is ${lastKnown})`;
  const afterPrefix = t.delivered - prefix;
  const unsent = flushed ? `${t.notSent} not sent` : `${t.notSent} in flight or not sent (outcome unknown)`;
  const rest =
    flushed && t.failed + t.unknown + afterPrefix === 0
      ? 'none after it was sent'
      : `after it ${afterPrefix} acknowledged, ${t.failed} failed, ${t.unknown} unknown, ${unsent}`;
  const how = flushed
    ? 'stopped publishing and flushed what was in flight'
    : 'stopped publishing; a second signal ended the flush';
  const lost =
    guardLost === undefined ? '' : `; the producer guard was lost meanwhile (${guardLost}): run verify again`;
  return `interrupted by ${signal}: ${how}: ${known}, ${rest}; ${resumeAdvice(lines, outcomes)}; ${rerunSafety}${lost}`;
}

/** How to publish the rest: from the first line not known published. */
function resumeAdvice(lines: readonly EncodedFixtureLine[], outcomes: readonly (LineOutcome | undefined)[]): string {
  const prefix = acknowledgedPrefix(outcomes);
  if (prefix === lines.length) return 'nothing is left to publish';
  return `to publish the rest, rerun with --from-line ${lines[prefix]!.line}`;
}

/** How many lines, from the first, were all acknowledged. */
function acknowledgedPrefix(outcomes: readonly (LineOutcome | undefined)[]): number {
  const firstNot = outcomes.findIndex((o) => o === undefined || !('delivered' in o));
  return firstNot === -1 ? outcomes.length : firstNot;
}
