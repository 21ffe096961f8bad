/**
 * The one place where failures become exit codes (docs/design.md#commands): 0 success, 1 operational
 * failure with a one-line diagnostic, 2 usage error, 3 verify FAIL, 4 verify INCOMPLETE.
 */

import { AmendsError } from '../kernel/amends-error.js';
import { errorMessage } from '../kernel/error-message.js';
import type { Verdict } from '../verify/verify-document.js';

export const exitCodes = { ok: 0, failure: 1, usage: 2, verifyFail: 3, verifyIncomplete: 4 } as const;

/** A verdict is not an error: the verify command returns its exit code (PASS 0, FAIL 3, INCOMPLETE 4). */
export function exitCodeForVerdict(verdict: Verdict): number {
  if (verdict === 'PASS') return exitCodes.ok;
  return verdict === 'FAIL' ? exitCodes.verifyFail : exitCodes.verifyIncomplete;
}

export function exitCodeFor(error: unknown): number {
  if (error instanceof AmendsError && error.code === 'usage') return exitCodes.usage;
  return exitCodes.failure;
}

/** One line, never a stack trace: the user reads this. */
export function diagnosticFor(program: string, error: unknown): string {
  return `${program}: ${failureLine(error)}`;
}

/**
 * What the user can try next, when the error says (AmendsError's `nextStep`): printed on its
 * own line after the diagnostic, so the diagnostic stays the one line that says what failed.
 */
export function nextStepLine(program: string, error: unknown): string | undefined {
  const step = nextStepOf(error);
  return step === undefined ? undefined : `${program}: next step: ${step}`;
}

/** The error's next step in one line, without the program's name (a process's last log line). */
export function nextStepOf(error: unknown): string | undefined {
  if (!(error instanceof AmendsError) || error.nextStep === undefined) return undefined;
  return firstLine(error.nextStep);
}

/** What went wrong in one line, without the program's name (verify --json's ERROR reason). */
export function failureLine(error: unknown): string {
  if (error instanceof AmendsError) return firstLine(error.message);
  const message = errorMessage(error);
  return `unexpected failure: ${firstLine(message)}`;
}

function firstLine(s: string): string {
  return s.split('\n', 1)[0] ?? '';
}
