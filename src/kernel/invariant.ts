/**
 * Assertions for invariants, the one copy that the engine, the machines and every adapter use.
 * A failing one is a bug report (or a broker or database breaking its contract), not a user
 * error; the CLI still prints it as one line. Pure: it lives in the domain so that all may
 * import it.
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
