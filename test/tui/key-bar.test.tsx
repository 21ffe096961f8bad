import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { KeyBar } from '../../src/tui/key-bar.js';

describe('KeyBar', () => {
  it('lists the keys', () => {
    const { lastFrame } = render(<KeyBar width={100} />);
    expect(lastFrame()).toBe('q quit · ↑/↓ select partition · esc deselect · ? help');
  });

  it('leads with the stopping line while a worker drains', () => {
    const { lastFrame } = render(<KeyBar width={100} stopping="stopping: draining the partitions…" />);
    expect(lastFrame()).toMatch(/^stopping: draining the partitions… · q quit/);
  });
});
