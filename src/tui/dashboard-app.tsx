/**
 * The whole dashboard: reads the store through `useSyncExternalStore`, sizes every section
 * to the terminal (rows and columns, updated on `resize`; ink 6.8 has no useWindowSize) and
 * handles the keys. No I/O here: quitting is the caller's `onQuit`.
 */
import { Box, useInput, useStdin, useStdout } from 'ink';
import { useEffect, useState, useSyncExternalStore } from 'react';
import { DashboardHeader } from './dashboard-header.js';
import type { DashboardStore } from './dashboard-store.js';
import { FaultTimeline } from './fault-timeline.js';
import { HelpOverlay } from './help-overlay.js';
import { KeyBar } from './key-bar.js';
import { planSections } from './layout.js';
import { PartitionDetail } from './partition-detail.js';
import { PartitionTable } from './partition-table.js';
import { RecentDecisions } from './recent-decisions.js';
import { TotalsLine } from './totals-line.js';
import { WorkersTable } from './workers-table.js';

/** When the output is not a terminal (tests), this size is assumed. */
export const fallbackSize = { columns: 100, rows: 30 };

export interface TerminalSize {
  columns: number;
  rows: number;
}

export interface DashboardAppProps {
  store: DashboardStore;
  /** q or Ctrl-C. */
  onQuit: () => void;
  /** Overrides the terminal's size (tests). */
  size?: TerminalSize;
  /** A line for the key bar while quitting takes time (a worker draining). */
  stopping?: string | null;
}

/**
 * Erase the screen (ED2) and home the cursor (CUP), keeping the user's scrollback. After a
 * resize the terminal may have reflowed or scrolled the old frame, so ink's erase of "the
 * last frame's lines" misses some of them (seen in tmux: the frame's first lines left above
 * it after the window shrank and grew back). Through ink's own `write`, which takes the
 * frame down first and draws it again after.
 */
const clearScreen = '\u001b[2J\u001b[H';

function useTerminalSize(override: TerminalSize | undefined): TerminalSize {
  const { stdout, write } = useStdout();
  const read = (): TerminalSize => ({
    columns: stdout.columns || fallbackSize.columns,
    rows: stdout.rows || fallbackSize.rows,
  });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = () => {
      write(clearScreen);
      setSize(read());
    };
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  });
  return override ?? size;
}

export function DashboardApp({ store, onQuit, size: override, stopping }: DashboardAppProps) {
  const { data, ui } = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  const { columns, rows } = useTerminalSize(override);
  const { isRawModeSupported } = useStdin();
  useInput(
    (input, key) => {
      if (input === 'q' || (key.ctrl && input === 'c')) onQuit();
      else if (input === '?') store.toggleHelp();
      else if (key.escape) {
        if (ui.help) store.toggleHelp();
        else store.clearSelection();
      } else if (key.upArrow || input === 'k') store.moveSelection(-1);
      else if (key.downArrow || input === 'j') store.moveSelection(1);
    },
    { isActive: isRawModeSupported === true },
  );
  const selected = data.partitions.find((p) => p.partition === ui.selected) ?? null;
  const plan = planSections(rows, {
    partitions: data.partitions.length,
    workers: data.workers.length,
    recent: data.recent.length,
    timeline: data.timeline === null ? null : data.timeline.length,
    selected: selected !== null,
  });
  const width = Math.max(1, columns);
  const body = rows - 1 - plan.header - plan.keys;
  return (
    <Box flexDirection="column" width={width}>
      <DashboardHeader
        header={data.header}
        feedError={data.feedError}
        loaded={data.loaded}
        width={width}
        lines={plan.header}
      />
      {ui.help ? (
        <HelpOverlay width={width} lines={body} />
      ) : (
        <>
          <PartitionTable partitions={data.partitions} selected={ui.selected} width={width} lines={plan.partitions} />
          {selected !== null && <PartitionDetail partition={selected} width={width} lines={plan.detail} />}
          <WorkersTable workers={data.workers} width={width} lines={plan.workers} />
          {plan.totals > 0 && (
            <TotalsLine
              counts={data.counts}
              quarantine={data.quarantine}
              outbox={data.outbox}
              viewLag={data.viewLag}
              width={width}
            />
          )}
          {data.timeline !== null && <FaultTimeline entries={data.timeline} width={width} lines={plan.timeline} />}
          <RecentDecisions recent={data.recent} width={width} lines={plan.recent} />
        </>
      )}
      {plan.keys > 0 && <KeyBar width={width} stopping={stopping ?? null} />}
    </Box>
  );
}
