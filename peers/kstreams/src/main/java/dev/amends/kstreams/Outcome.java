package dev.amends.kstreams;

/** A decision's outcome, in the order of the checks (amends' docs/design.md#outcomes). */
enum Outcome {
  MALFORMED,
  SCHEMA,
  KEY_MISMATCH,
  UNKNOWN_KEY,
  ROUTING,
  BEFORE_ORIGIN,
  STALE,
  DUPLICATE,
  CONFLICT,
  APPLIED
}
