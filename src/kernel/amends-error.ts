/**
 * Errors are values with a code and a one-line message a user can act on.
 * The CLI maps codes to exit codes in one place (src/cli/exit.ts).
 */
export type AmendsErrorCode =
  /** bad flags or arguments: exit 2 */
  | 'usage'
  /** bad input data (a file, a configuration, a manifest): exit 1 */
  | 'invalid_input'
  /** a dependency (broker, database, tool) is missing or failed: exit 1 */
  | 'operational';

export class AmendsError extends Error {
  readonly code: AmendsErrorCode;

  constructor(code: AmendsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AmendsError';
    this.code = code;
  }
}

export function usageError(message: string): AmendsError {
  return new AmendsError('usage', message);
}

export function invalidInput(message: string): AmendsError {
  return new AmendsError('invalid_input', message);
}

export function operationalError(message: string, cause?: unknown): AmendsError {
  return new AmendsError('operational', message, cause === undefined ? undefined : { cause });
}
