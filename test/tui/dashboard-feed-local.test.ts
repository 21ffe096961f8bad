import { afterEach, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createLocalFeed } from '../../src/tui/dashboard-feed-local.js';
import type { DashboardStore } from '../../src/tui/dashboard-store.js';
import type { LocalSummary } from '../../src/tui/worker-report.js';
import { storeWithClock } from './fixtures.js';

const stores: DashboardStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.dispose();
});

function event(e: Record<string, unknown>): InspectionEvent {
  return { rootId: 'x', ...e } as unknown as InspectionEvent;
}

const summary = (state: string): LocalSummary =>
  ({
    state: { running: 'polling' },
    context: { partitions: [] },
    partitions: [
      {
        state,
        context: {
          partition: 0,
          token: { epoch: 3 },
          frontier: 4,
          attempts: 1,
          operation: 'claim',
          lastOutcome: null,
        },
      },
    ],
  }) as never;

describe('the in-process (inspection) feed', () => {
  it('pushes the runtime summary as the local worker, and notable events to the timeline', () => {
    const { store } = storeWithClock(1, true);
    stores.push(store);
    const feed = createLocalFeed(store, { id: 'me', pid: 9 });
    let state = 'claiming';
    feed.start(() => summary(state));
    feed.inspect(
      event({
        type: '@xstate.event',
        actorRef: { id: 'root' },
        event: { type: 'PARTITIONS_ASSIGNED', partitions: [0] },
      }),
    );
    feed.inspect(
      event({ type: '@xstate.snapshot', actorRef: { id: 'partition-0' }, snapshot: { value: { claiming: 'claim' } } }),
    );
    feed.inspect(
      event({ type: '@xstate.snapshot', actorRef: { id: 'partition-0' }, snapshot: { value: 'processing' } }),
    );
    feed.inspect(
      event({ type: '@xstate.snapshot', actorRef: { id: 'partition-0' }, snapshot: { value: { processing: 'idle' } } }),
    );
    state = 'retired';
    feed.inspect(event({ type: '@xstate.event', actorRef: { id: 'root' }, event: { type: 'STOP', reason: 'SIGINT' } }));
    feed.stop();
    store.flush();
    const { data } = store.getSnapshot();
    expect(data.workers).toEqual([
      expect.objectContaining({ id: 'me', pid: 9, local: true, groupState: 'running.polling' }),
    ]);
    expect(data.partitions[0]).toMatchObject({
      state: 'retired',
      owner: 'me',
      epoch: 3,
      operation: 'claim',
    });
    expect(data.timeline?.map((e) => e.text)).toEqual([
      'assigned partitions [0]',
      'p0 → claiming.claim',
      'p0 → processing',
      'stop (SIGINT)',
    ]);
  });
});
