/**
 * The showcase's filler load (docs/design.md#showcase): a deterministic stream of valid
 * revisions for one stock key, so every fault lands on work in flight. Pure: the same
 * arguments give the same lines.
 *
 * Each filler transaction posts on a day of its own, one day after the previous one, so an
 * ordinary post creates one output version; the revisions mixed in exercise the rest of the
 * rules on live data:
 *   - n % 10 = 7 corrects the post three before it (rev 2, other qty): APPLIED, new versions
 *     from that day on;
 *   - n % 10 = 9 redelivers the previous record (an ordinary post) unchanged: DUPLICATE;
 *   - n % 50 = 48 replays revision 1 of the post corrected at n − 41: STALE;
 *   - n % 50 = 49 cancels the post of n − 21 (rev 3): APPLIED, a retraction.
 * (Slots 7 and 9 of each ten carry no transaction of their own, so the targets above are
 * always ordinary posts.)
 */
import { addDays } from './calendar-day.js';

/** One fixture line (docs/design.md#source-load) before it is written as JSON. */
export interface FillerLine {
  key: { item: string; location: string };
  value: Record<string, string | number>;
}

export interface FillerRequest {
  item: string;
  location: string;
  /** Names this batch of transactions (`F<stage>`): transaction ids never collide across stages. */
  stage: string;
  /** Records to generate. */
  count: number;
  /** Days are `firstDay` + the transaction's index; later stages pass a later first day. */
  firstDay: string;
}

/** Small quantities that keep closings near the opening: −9 … +9, never a silent overflow. */
function quantity(n: number, rev: number): number {
  return ((n * 7 + rev * 3) % 19) - 9;
}

export function fillerLines(request: FillerRequest): FillerLine[] {
  const { item, location, stage, count } = request;
  const key = { item, location };
  const txn = (n: number) => `F${stage}-${n}`;
  const post = (n: number, rev: number) => ({
    key,
    value: {
      schema: 1,
      txn: txn(n),
      rev,
      op: 'post',
      item,
      location,
      day: addDays(request.firstDay, n),
      qty: quantity(n, rev),
    },
  });
  const lines: FillerLine[] = [];
  for (let n = 0; n < count; n++) {
    if (n % 50 === 49) {
      lines.push({ key, value: { schema: 1, txn: txn(n - 21), rev: 3, op: 'cancel', item, location } });
    } else if (n % 50 === 48) {
      lines.push(post(n - 44, 1));
    } else if (n % 10 === 9) {
      const previous = lines[lines.length - 1];
      if (previous) lines.push(previous);
    } else if (n % 10 === 7) {
      lines.push(post(n - 3, 2));
    } else {
      lines.push(post(n, 1));
    }
  }
  return lines;
}
