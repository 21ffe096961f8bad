import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { TotalsLine } from '../../src/tui/totals-line.js';

describe('TotalsLine', () => {
  it('shows the non-zero outcomes, quarantine, outbox pending and view lag', () => {
    const { lastFrame } = render(
      <TotalsLine
        counts={{ APPLIED: 8, DUPLICATE: 1, STALE: 0 }}
        quarantine={2}
        outbox={{ pending: 3, published: 7 }}
        viewLag={null}
        width={100}
      />,
    );
    expect(lastFrame()).toBe('APPLIED 8 DUPLICATE 1 · quarantine 2 · outbox 3 pending · view lag -');
  });

  it('stays one line at 40 columns', () => {
    const { lastFrame } = render(
      <TotalsLine counts={{ APPLIED: 8 }} quarantine={0} outbox={null} viewLag={4} width={40} />,
    );
    expect((lastFrame() ?? '').split('\n')).toHaveLength(1);
  });
});
