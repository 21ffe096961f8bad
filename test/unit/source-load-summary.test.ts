/**
 * source-load's closing verdict (src/cli/commands/source-load.ts `summarizeFailures`): a load
 * whose producer guard was lost exits 1 even when every line was acknowledged and the loss
 * came after the last line was queued (issue 17: it exited 0, so for the tail of the load
 * "no writer while verify compares" did not hold and nobody was told).
 */
import { describe, expect, it } from 'vitest';
import { type LineOutcome, summarizeFailures } from '../../src/cli/commands/source-load.js';
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
      'line 2: publication failed: Broker: Message too large (1 of 3 lines acknowledged, 1 failed, 0 unknown, 1 not sent); rerunning may redeliver identical revisions (the worker decides them as DUPLICATE)',
    );
  });
});
