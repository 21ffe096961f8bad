import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { partitionMachine } from '../../src/machines/partition-machine.js';
import { HelpOverlay, helpLines } from '../../src/tui/help-overlay.js';

describe('HelpOverlay', () => {
  it('explains the keys and every lifecycle state', () => {
    const { lastFrame } = render(<HelpOverlay width={120} lines={20} />);
    const frame = lastFrame() ?? '';
    for (const word of [
      'q quit',
      'unassigned',
      'claiming',
      'seeking',
      'processing',
      'recovering',
      'retired',
      'failed',
    ]) {
      expect(frame).toContain(word);
    }
  });

  it("gives each state the partition chart's own description", () => {
    const recovering = partitionMachine.getStateNodeById('partition.processing.deciding.recovering');
    expect(recovering.description).toBeTruthy();
    expect(
      helpLines.some((line) => /^\s+recovering\s/.test(line) && line.endsWith(recovering.description ?? '?')),
    ).toBe(true);
  });

  it('is cut to the lines it is given', () => {
    const { lastFrame } = render(<HelpOverlay width={80} lines={3} />);
    expect((lastFrame() ?? '').split('\n')).toHaveLength(3);
    expect(helpLines.length).toBeGreaterThan(3);
  });
});
