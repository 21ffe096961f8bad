import { afterEach, describe, expect, it } from 'vitest';
import { flushIntervalMs } from '../../src/tui/dashboard-store.js';
import { actor, report, sample, storeWithClock, tick } from './fixtures.js';

const stores: { dispose(): void }[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.dispose();
});

describe('DashboardStore', () => {
  it('tells subscribers at most once per flush interval, however often the feeds push', async () => {
    const { store } = storeWithClock();
    stores.push(store);
    let calls = 0;
    store.subscribe(() => {
      calls += 1;
    });
    for (let i = 0; i < 50; i++) store.applyStoreSample(sample({ counts: { APPLIED: i } }));
    expect(calls).toBe(0);
    expect(store.getSnapshot().data.loaded).toBe(false);
    await tick(flushIntervalMs + 50);
    expect(calls).toBe(1);
    expect(store.getSnapshot().data.counts).toEqual({ APPLIED: 49 });
  });

  it('keeps the snapshot identical between flushes (useSyncExternalStore)', () => {
    const { store } = storeWithClock();
    stores.push(store);
    const before = store.getSnapshot();
    store.applyStoreSample(sample());
    expect(store.getSnapshot()).toBe(before);
    store.flush();
    expect(store.getSnapshot()).not.toBe(before);
    expect(store.getSnapshot()).toBe(store.getSnapshot());
  });

  it('computes records/s from frontier deltas', () => {
    const { store, clock } = storeWithClock(1);
    stores.push(store);
    const at = (frontier: number) =>
      sample({
        partitions: [{ partition: 0, epoch: 1, frontier, configRevision: 1, owner: 'w', lastWorkCounts: null }],
      });
    store.applyStoreSample(at(0));
    store.flush();
    expect(store.getSnapshot().data.partitions[0]?.recordsPerSecond).toBeNull();
    clock.ms += 1_000;
    store.applyStoreSample(at(50));
    clock.ms += 1_000;
    store.applyStoreSample(at(100));
    store.flush();
    expect(store.getSnapshot().data.partitions[0]?.recordsPerSecond).toBe(50);
    clock.ms += 10_000;
    store.applyStoreSample(at(100));
    clock.ms += 1_000;
    store.applyStoreSample(at(100));
    store.flush();
    expect(store.getSnapshot().data.partitions[0]?.recordsPerSecond).toBe(0);
  });

  it('remembers who listed a partition: a stop shows as retired and the worker as stopped', () => {
    const { store } = storeWithClock(1);
    stores.push(store);
    store.applyStoreSample(sample({ workers: [report('w1', { partitions: [actor(0, 'processing.idle')] })] }));
    store.flush();
    expect(store.getSnapshot().data.partitions[0]?.state).toBe('processing.idle');
    store.applyStoreSample(sample({ workers: [report('w1', { groupState: 'stopped' })] }));
    store.flush();
    expect(store.getSnapshot().data.partitions[0]?.state).toBe('retired');
    expect(store.getSnapshot().data.workers[0]?.groupState).toBe('stopped');
  });

  it('moves the selection with the keys and toggles help, at once', () => {
    const { store } = storeWithClock(3);
    stores.push(store);
    store.moveSelection(1);
    expect(store.getSnapshot().ui.selected).toBe(0);
    store.moveSelection(1);
    store.moveSelection(1);
    store.moveSelection(1);
    expect(store.getSnapshot().ui.selected).toBe(2);
    store.moveSelection(-1);
    expect(store.getSnapshot().ui.selected).toBe(1);
    store.clearSelection();
    expect(store.getSnapshot().ui.selected).toBeNull();
    store.toggleHelp();
    expect(store.getSnapshot().ui.help).toBe(true);
  });

  it('bounds the timeline and the recent decisions', () => {
    const { store } = storeWithClock(1, true);
    stores.push(store);
    for (let i = 0; i < 500; i++) store.addTimeline(`event ${i}`);
    const recent = Array.from({ length: 500 }, (_, i) => ({
      partition: 0,
      offset: i,
      outcome: 'APPLIED',
      txn: null,
      rev: null,
    }));
    store.applyStoreSample(sample({ recent }));
    store.flush();
    const { data } = store.getSnapshot();
    expect(data.timeline?.length).toBe(50);
    expect(data.timeline?.at(-1)?.text).toBe('event 499');
    expect(data.recent.length).toBe(50);
  });
});
