/**
 * Assertions for invariants of the I/O layer. A failing one is a bug report (or a broker or
 * database breaking its contract), not a user error; the CLI still prints it as one line.
 */
export class InvariantViolation extends Error {
  constructor(message: string) {
    super(`invariant violated: ${message}`);
    this.name = 'InvariantViolation';
  }
}

export function assertInvariant(condition: boolean, message: string): asserts condition {
  if (!condition) throw new InvariantViolation(message);
}
