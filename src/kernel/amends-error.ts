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

export interface AmendsErrorOptions {
  cause?: unknown;
  /**
   * A dependency outage worth riding out (docs/design.md#unknown-outcomes), decided by the adapter that wrapped
   * the client's error (io/store/pg-errors.ts, io/kafka/kafka-errors.ts), as platformatic/kafka
   * sets `canRetry` on the errors it creates.
   */
  outage?: boolean;
  /** What the user can try next, printed on its own line after the diagnostic (cli-kit's tryMessage). */
  nextStep?: string;
}

export class AmendsError extends Error {
  readonly code: AmendsErrorCode;
  readonly outage: boolean;
  readonly nextStep: string | undefined;

  constructor(code: AmendsErrorCode, message: string, options?: AmendsErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AmendsError';
    this.code = code;
    this.outage = options?.outage ?? false;
    this.nextStep = options?.nextStep;
  }
}

export function usageError(message: string): AmendsError {
  return new AmendsError('usage', message);
}

export function invalidInput(message: string): AmendsError {
  return new AmendsError('invalid_input', message);
}

export function operationalError(
  message: string,
  cause?: unknown,
  options?: Omit<AmendsErrorOptions, 'cause'>,
): AmendsError {
  return new AmendsError('operational', message, { ...options, ...(cause === undefined ? {} : { cause }) });
}
