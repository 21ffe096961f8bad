/**
 * Which failures are a dependency outage (docs/design.md#outages): the database or
 * the broker did not answer, or a session died under us. Those are ridden through within the
 * outage budget; anything else (a refused statement, a topic that changed, an inconsistent
 * store) still ends the process at once.
 *
 * The verdict is made where a client is wrapped: the adapter sets `outage` on the amends error
 * it creates (io/store/pg-errors.ts, io/kafka/kafka-errors.ts). A client's own error that
 * escapes unwrapped is recognised by the rooms' tests of one error (`OutageTest`), which the
 * caller that rides composes and passes in (cli/dependency-outage.ts); the kernel knows no
 * client's texts or codes.
 */

/** Whether one error of a cause chain, on its own, is an outage (a room's knowledge of its client). */
export type OutageTest = (link: unknown) => boolean;

/** How deep the cause chain is followed: wrappers nest a few levels, never more. */
const causeDepthMax = 8;

const recognisesNothing: OutageTest = () => false;

/**
 * True when `error` or any error in its `cause` chain carries `outage: true`, or is one that
 * `recognises` tells is an outage.
 */
export function isOutageError(error: unknown, recognises: OutageTest = recognisesNothing): boolean {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < causeDepthMax; depth++) {
    if ((e as { outage?: unknown }).outage === true || recognises(e)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
