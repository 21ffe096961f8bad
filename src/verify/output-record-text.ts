/**
 * The output topic record of a version (docs/design.md#output-envelope) as the verifier expects it, written
 * here rather than taken from src/domain/export-lines.ts, so that a bug in the worker's
 * rendering shows up as an outbox or topic difference. Canonical JSON (RFC 8785) of these
 * fixed members is their names in sorted order, no whitespace, strings as JSON.stringify
 * escapes them and integers as plain decimals.
 */

/** docs/design.md#output-envelope: the output envelope's `schema`. */
export const outputRecordSchema = 1;

export interface ExpectedVersion {
  item: string;
  location: string;
  day: string;
  version: number;
  /** null: retracted. */
  closing: number | null;
  status: 'NEGATIVE' | 'LOW' | 'OK' | null;
  cause: { partition: number; offset: number };
}

export function expectedRecordKey(v: Pick<ExpectedVersion, 'item' | 'location' | 'day'>): string {
  return `{"day":${JSON.stringify(v.day)},"item":${JSON.stringify(v.item)},"location":${JSON.stringify(v.location)}}`;
}

export function expectedRecordValue(v: ExpectedVersion, namespace: string): string {
  const q = JSON.stringify;
  return (
    `{"cause":{"offset":${v.cause.offset},"partition":${v.cause.partition}},"closing":${v.closing === null ? 'null' : v.closing},` +
    `"day":${q(v.day)},"item":${q(v.item)},"location":${q(v.location)},"namespace":${q(namespace)},` +
    `"retracted":${v.closing === null},"schema":${outputRecordSchema},"status":${v.status === null ? 'null' : q(v.status)},` +
    `"version":${v.version}}`
  );
}
