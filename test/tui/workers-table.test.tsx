import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { WorkersTable } from '../../src/tui/workers-table.js';

describe('WorkersTable', () => {
  it('shows id, role, pid, group state and heartbeat age', () => {
    const { lastFrame } = render(
      <WorkersTable
        workers={[
          {
            id: 'worker-a',
            role: 'worker',
            pid: 123,
            groupState: 'running.polling',
            heartbeatAgeMs: 1500,
            local: false,
          },
          { id: 'worker-b', role: 'worker', pid: 456, groupState: 'stopped', heartbeatAgeMs: null, local: true },
        ]}
        width={100}
        lines={4}
      />,
    );
    const frame = (lastFrame() ?? '').split('\n');
    expect(frame[0]).toMatch(/worker\s+role\s+pid\s+group state\s+heartbeat/);
    expect(frame[1]).toMatch(/worker-a\s+worker\s+123 running\.polling\s+1\.5s/);
    expect(frame[2]).toMatch(/worker-b\s+worker\s+456 stopped\s+this/);
  });

  it('says so when no worker has a heartbeat row', () => {
    const { lastFrame } = render(<WorkersTable workers={[]} width={80} lines={2} />);
    expect(lastFrame()).toContain('none seen');
  });

  it('counts the processes it has no room for', () => {
    const workers = Array.from({ length: 5 }, (_, i) => ({
      id: `w${i}`,
      role: 'worker',
      pid: i,
      groupState: 'running.polling',
      heartbeatAgeMs: 0,
      local: false,
    }));
    const { lastFrame } = render(<WorkersTable workers={workers} width={80} lines={3} />);
    const frame = (lastFrame() ?? '').split('\n');
    expect(frame).toHaveLength(3);
    expect(frame[2]).toContain('4 more processes');
  });
});
