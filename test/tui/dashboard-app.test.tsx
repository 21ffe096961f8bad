import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DashboardApp } from '../../src/tui/dashboard-app.js';
import type { DashboardStore } from '../../src/tui/dashboard-store.js';
import { actor, lifecycleStates, report, sample, storeWithClock, tick } from './fixtures.js';

const downArrow = '\u001B[B';
const upArrow = '\u001B[A';

const stores: DashboardStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.dispose();
});

/** One partition per lifecycle state: live actors from two workers, the endings remembered. */
function storeInEveryState(): DashboardStore {
  const { store } = storeWithClock(lifecycleStates.length);
  stores.push(store);
  const live = lifecycleStates.flatMap((state, p) =>
    state === 'unassigned' || state === 'retired' || state === 'failed'
      ? []
      : [actor(p, state, { epoch: p, frontier: p * 10 })],
  );
  const retiredP = lifecycleStates.indexOf('retired');
  const failedP = lifecycleStates.indexOf('failed');
  // Partitions 1 and 4 were revised (config-revise); the others have no row: revision 1.
  const revised = [1, 4].map((p) => ({
    partition: p,
    epoch: p,
    frontier: p * 10,
    configRevision: 2,
    owner: null,
    lastWorkCounts: null,
  }));
  store.applyStoreSample(
    sample({
      workers: [
        report('worker-a', { partitions: live.slice(0, 3), pid: 11 }),
        report('worker-b', { partitions: live.slice(3), pid: 12 }),
        report('worker-c', { pid: 13, partitions: [actor(retiredP, 'processing.idle')] }),
        report('worker-d', { pid: 14, partitions: [actor(failedP, 'processing.idle')] }),
      ],
      ends: new Map(lifecycleStates.map((_, p) => [p, p * 10 + 3])),
      counts: { APPLIED: 5, DUPLICATE: 1 },
      recent: [{ partition: 1, offset: 4, outcome: 'APPLIED', txn: 'T1', rev: 1 }],
    }),
  );
  store.applyStoreSample(
    sample({
      partitions: revised,
      workers: [
        report('worker-a', { partitions: live.slice(0, 3), pid: 11 }),
        report('worker-b', { partitions: live.slice(3), pid: 12 }),
        report('worker-c', { pid: 13, groupState: 'stopped' }),
        report('worker-d', { pid: 14, groupState: 'failed' }),
      ],
      ends: new Map(lifecycleStates.map((_, p) => [p, p * 10 + 3])),
      counts: { APPLIED: 5, DUPLICATE: 1 },
      recent: [{ partition: 1, offset: 4, outcome: 'APPLIED', txn: 'T1', rev: 1 }],
    }),
  );
  store.flush();
  return store;
}

function rowOf(frame: string, p: number): string {
  return frame.split('\n').find((l) => new RegExp(`^\\s+${p} `).test(l)) ?? '';
}

describe('DashboardApp', () => {
  it('shows one row per partition with its statechart state, for every lifecycle state', async () => {
    const store = storeInEveryState();
    const { lastFrame, unmount } = render(
      <DashboardApp store={store} onQuit={() => {}} size={{ columns: 100, rows: 30 }} />,
    );
    await tick();
    const frame = lastFrame() ?? '';
    lifecycleStates.forEach((state, p) => {
      expect(rowOf(frame, p)).toContain(state);
    });
    // Owner, epoch, cfg (the configuration revision), frontier, end, lag.
    expect(rowOf(frame, 1)).toMatch(/claiming\.claim\s+worker-a\s+1\s+2\s+10\s+13\s+3/);
    expect(rowOf(frame, 2)).toMatch(/seeking\.observeStore\s+worker-a\s+2\s+1\s+20\s+23\s+3/);
    expect(frame).toContain('namespace ns-test');
    expect(frame).toMatch(/worker-c\s+worker\s+13 stopped/);
    expect(frame).toContain('APPLIED 5 DUPLICATE 1');
    expect(frame).toContain('p1 @4 APPLIED T1 rev 1');
    expect(frame.split('\n').length).toBeLessThan(30);
    unmount();
  });

  it('selects a partition with the arrow keys and shows its path and context', async () => {
    const store = storeInEveryState();
    const { lastFrame, stdin, unmount } = render(
      <DashboardApp store={store} onQuit={() => {}} size={{ columns: 100, rows: 30 }} />,
    );
    await tick();
    expect(lastFrame()).not.toContain('path ');
    stdin.write(downArrow);
    await tick();
    expect(lastFrame()).toContain('partition 0 · path unassigned');
    stdin.write(downArrow);
    stdin.write(downArrow);
    stdin.write(downArrow);
    stdin.write(downArrow);
    await tick();
    expect(lastFrame()).toContain('partition 4 · path processing › deciding › committing');
    expect(lastFrame()).toContain(
      'context  epoch 4 · config revision 2 · frontier 40 · end 43 · lag 3 · owner worker-b',
    );
    stdin.write(upArrow);
    await tick();
    expect(lastFrame()).toContain('partition 3 · path processing › idle');
    stdin.write('\u001B');
    await tick(100);
    expect(lastFrame()).not.toContain('path ');
    unmount();
  });

  it('opens and closes the help overlay with ?', async () => {
    const store = storeInEveryState();
    const { lastFrame, stdin, unmount } = render(
      <DashboardApp store={store} onQuit={() => {}} size={{ columns: 100, rows: 30 }} />,
    );
    await tick();
    stdin.write('?');
    await tick();
    expect(lastFrame()).toContain('states of a partition actor');
    expect(lastFrame()).not.toMatch(/^\s+0 unassigned/m);
    stdin.write('?');
    await tick();
    expect(lastFrame()).not.toContain('states of a partition actor');
    expect(rowOf(lastFrame() ?? '', 0)).toContain('unassigned');
    unmount();
  });

  it('quits on q and on Ctrl-C', async () => {
    const store = storeInEveryState();
    const onQuit = vi.fn();
    const { stdin, unmount } = render(<DashboardApp store={store} onQuit={onQuit} size={{ columns: 100, rows: 30 }} />);
    await tick();
    stdin.write('q');
    stdin.write('\u0003');
    await tick();
    expect(onQuit).toHaveBeenCalledTimes(2);
    unmount();
  });

  it.each([
    [80, 24],
    [80, 12],
    [60, 8],
  ])('stays shorter than a %ix%i terminal and within its width', async (columns, rows) => {
    const store = storeInEveryState();
    store.moveSelection(1);
    const { lastFrame, unmount } = render(<DashboardApp store={store} onQuit={() => {}} size={{ columns, rows }} />);
    await tick();
    const lines = (lastFrame() ?? '').split('\n');
    expect(lines.length).toBeLessThan(rows);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(columns);
    expect(lines.at(-1)).toContain('q quit');
    unmount();
  });

  it('redraws when the feed pushes, after the flush interval', async () => {
    const { store } = storeWithClock(1);
    stores.push(store);
    const { lastFrame, unmount } = render(
      <DashboardApp store={store} onQuit={() => {}} size={{ columns: 100, rows: 20 }} />,
    );
    await tick();
    expect(rowOf(lastFrame() ?? '', 0)).toContain('unassigned');
    store.applyStoreSample(sample({ workers: [report('w1', { partitions: [actor(0, 'seeking.observeStore')] })] }));
    await tick(200);
    expect(rowOf(lastFrame() ?? '', 0)).toContain('seeking.observeStore');
    unmount();
  });
});
