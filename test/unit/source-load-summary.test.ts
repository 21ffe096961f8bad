/**
 * source-load's closing verdict (src/cli/source-load-outcomes.ts `summarizeFailures`): a load
 * whose producer guard was lost exits 1 even when every line was acknowledged and the loss
 * came after the last line was queued (issue 17: it exited 0, so for the tail of the load
 * "no writer while verify compares" did not hold and nobody was told).
 */
import { describe, expect, it } from 'vitest';
import { interruptionReport, type LineOutcome, summarizeFailures } from '../../src/cli/source-load-outcomes.js';
import type { EncodedFixtureLine } from '../../src/domain/fixture-line.js';
import { PublicationError } from '../../src/io/kafka/source-producer.js';

const lines: EncodedFixtureLine[] = [1, 2, 3].map((line) => ({
  line,
  partition: 0,
  key: new Uint8Array(),
  value: new Uint8Array(),
}));
const delivered = (offset: number): LineOutcome => ({ delivered: { partition: 0, offset } });
const allDelivered = [delivered(0), delivered(1), delivered(2)];
const rerunSafe =
  'rerunning the whole file is safe too: the worker decides each line published twice as DUPLICATE or STALE (or quarantines it again), so no balance changes';

describe('source-load summary', () => {
  it('is silent when every line was acknowledged under the guard', () => {
    expect(summarizeFailures(lines, allDelivered, { lost: undefined, firstUnguardedLine: undefined })).toBeUndefined();
  });

  it('names the lines published after the guard was lost, though all were acknowledged', () => {
    expect(summarizeFailures(lines, allDelivered, { lost: 'the session ended', firstUnguardedLine: 2 })).toBe(
      'the producer guard was lost (the session ended): all 3 lines were acknowledged, lines from 2 on after the loss was noticed, so a verify may have compared while they were published; run verify again',
    );
  });

  it('still fails when the guard was lost after the last acknowledgement, before the producer closed', () => {
    expect(
      summarizeFailures(lines, allDelivered, { lost: 'the session ended', firstUnguardedLine: undefined }),
    ).toMatch(/^the producer guard was lost \(the session ended\): all 3 lines were acknowledged, each before/);
  });

  it('a failed line is named first, with the counts', () => {
    const outcomes = [delivered(0), { error: new PublicationError('failed', 'Broker: Message too large') }, undefined];
    expect(summarizeFailures(lines, outcomes, { lost: undefined, firstUnguardedLine: undefined })).toBe(
      `line 2: publication failed: Broker: Message too large (1 of 3 lines acknowledged, 1 failed, 0 unknown, 1 not sent); to publish the rest, rerun with --from-line 2; ${rerunSafe}`,
    );
  });
});

describe('source-load interrupted (issue 35)', () => {
  it('names the last line known published and the line to go on from', () => {
    expect(interruptionReport('SIGINT', lines, [delivered(0), delivered(1), undefined], undefined)).toBe(
      `interrupted by SIGINT: stopped publishing and flushed what was in flight: lines 1-2 of 1-3 are published (the last line known published is 2), none after it was sent; to publish the rest, rerun with --from-line 3; ${rerunSafe}`,
    );
  });

  it('counts what lies after a line not known published, and says when nothing is known', () => {
    const unknown = { error: new PublicationError('unknown', 'not acknowledged') };
    expect(interruptionReport('SIGTERM', lines, [unknown, delivered(0), undefined], undefined)).toBe(
      `interrupted by SIGTERM: stopped publishing and flushed what was in flight: no line of 1-3 is known published, after it 1 acknowledged, 0 failed, 1 unknown, 1 not sent; to publish the rest, rerun with --from-line 1; ${rerunSafe}`,
    );
  });

  it('keeps the file numbering of a load that began at --from-line, and says what a second signal left unknown', () => {
    const fromThree = [3, 4, 5].map((line) => ({ ...lines[0]!, line }));
    expect(interruptionReport('SIGINT', fromThree, [delivered(3), undefined, undefined], undefined, false)).toBe(
      `interrupted by SIGINT: stopped publishing; a second signal ended the flush: line 3 of 3-5 is published (the last line known published is 3), after it 0 acknowledged, 0 failed, 0 unknown, 2 in flight or not sent (outcome unknown); to publish the rest, rerun with --from-line 4; ${rerunSafe}`,
    );
  });
});
