/**
 * `--as-of P:O[,P:O…]` and `--as-of-time T` of `explain` and `balances` (docs/design.md#sql-read-api):
 * which decisions an answer includes, as a request that as-of-bound.ts turns into one bound per
 * partition before anything is read.
 */
import { isZonedTime } from '../domain/source-position.js';
import type { AsOfRequest } from '../io/store/as-of-bound.js';
import { usageError } from '../kernel/amends-error.js';

export const asOfFlags = {
  asOf: { type: 'string' },
  asOfTime: { type: 'string' },
} as const;

/** The flags' lines of a command's help, indented to `width`. */
export function asOfFlagsHelp(width: number): string {
  const flag = (name: string, text: string) => `    ${name.padEnd(width)}${text}`;
  return [
    flag('--as-of P:O', 'as of source position: partition P up to and including offset O'),
    flag('', '(several: 0:7,1:12; partitions not named: as decided now)'),
    flag('--as-of-time T', 'as of the decisions committed at or before T (e.g. 2026-03-05T10:00:00Z)'),
  ].join('\n');
}

export function asOfRequest(flags: { asOf?: string | undefined; asOfTime?: string | undefined }): AsOfRequest {
  const { asOf, asOfTime } = flags;
  if (asOf !== undefined && asOfTime !== undefined) throw usageError('--as-of and --as-of-time exclude each other');
  if (asOf !== undefined) return { kind: 'position', text: asOf };
  if (asOfTime !== undefined) {
    if (!isZonedTime(asOfTime)) {
      throw usageError(
        `--as-of-time ${JSON.stringify(asOfTime)} is not a time with a zone, e.g. 2026-03-05T10:00:00Z or 2026-03-05T11:00:00+01:00`,
      );
    }
    return { kind: 'time', at: asOfTime };
  }
  return { kind: 'now' };
}
