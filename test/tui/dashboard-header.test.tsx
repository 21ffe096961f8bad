import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { DashboardHeader } from '../../src/tui/dashboard-header.js';
import { header } from './fixtures.js';

describe('DashboardHeader', () => {
  it('names the namespace, topic, incarnation, brokers and database, never credentials', () => {
    const { lastFrame } = render(
      <DashboardHeader
        header={{ ...header, logFile: 'artifacts/logs/worker-a.jsonl' }}
        feedError={null}
        loaded
        width={120}
        lines={2}
      />,
    );
    const frame = lastFrame() ?? '';
    expect(frame).toContain('namespace ns-test');
    expect(frame).toContain('topic topic-test (kafka:abc123)');
    expect(frame).toContain('brokers 127.0.0.1:19092');
    expect(frame).toContain('db 127.0.0.1:15432/amends');
    expect(frame).toContain('logs artifacts/logs/worker-a.jsonl');
    expect(frame).not.toMatch(/password|amends-local-only/);
  });

  it('shows the feed error instead of the sources line', () => {
    const { lastFrame } = render(
      <DashboardHeader header={header} feedError="PostgreSQL: connection refused" loaded width={100} lines={2} />,
    );
    expect(lastFrame()).toContain('feed: PostgreSQL: connection refused');
  });

  it('says it is waiting before the first sample', () => {
    const { lastFrame } = render(
      <DashboardHeader header={header} feedError={null} loaded={false} width={120} lines={2} />,
    );
    expect(lastFrame()).toContain('waiting for the first sample');
  });
});
