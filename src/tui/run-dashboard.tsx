/**
 * Puts the dashboard on the terminal: ink at most 10 frames/s, no incremental rendering
 * (ghost lines on 6.8), console left alone (logs never go to this terminal while it is
 * drawn). Ctrl-C arrives as a key (raw mode) and is the caller's `onQuit`, like `q`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { render } from 'ink';
import { DashboardApp } from './dashboard-app.js';
import type { DashboardStore } from './dashboard-store.js';

export const dashboardMaxFps = 10;
const finalFrameWaitMs = 1000 / dashboardMaxFps + 50;

export interface RunningDashboard {
  /** Shows a line in the key bar (e.g. "stopping: draining the worker…"). */
  setStopping(text: string): void;
  /** Draws the last frame and gives the terminal back. */
  close(): Promise<void>;
}

export function runDashboard(
  store: DashboardStore,
  onQuit: () => void,
  streams: { stdout?: NodeJS.WriteStream; stdin?: NodeJS.ReadStream } = {},
): RunningDashboard {
  let stopping: string | null = null;
  const tree = () => <DashboardApp store={store} onQuit={onQuit} stopping={stopping} />;
  const instance = render(tree(), {
    maxFps: dashboardMaxFps,
    exitOnCtrlC: false,
    patchConsole: false,
    incrementalRendering: false,
    ...(streams.stdout === undefined ? {} : { stdout: streams.stdout }),
    ...(streams.stdin === undefined ? {} : { stdin: streams.stdin }),
  });
  return {
    setStopping(text) {
      stopping = text;
      instance.rerender(tree());
    },
    async close() {
      store.flush();
      // ink draws at most every 1000 / maxFps ms: give the last snapshot its frame before unmounting.
      await sleep(finalFrameWaitMs);
      instance.unmount();
      await instance.waitUntilExit().catch(() => {});
      store.dispose();
    },
  };
}
