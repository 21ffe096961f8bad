/**
 * Makes the worker's rides through transient outages (docs/design.md#unknown-outcomes) visible: one warn line
 * when the group starts riding, with the failure that began the outage, and one when it
 * leaves (to claim afresh, or to drain), plus a counter for the metrics endpoint.
 */
import type { InspectionEvent } from 'xstate';
import type { GroupContext } from '../../machines/group-machine.js';
import { stateText } from '../../machines/state-text.js';
import type { JsonLog } from './json-log.js';

interface GroupSnapshotView {
  machine?: { id?: string };
  value?: Parameters<typeof stateText>[0];
  context?: GroupContext;
}

/** An inspection listener for the worker runtime; `onRide` is told each time a ride begins. */
export function rideWatcher(log: JsonLog, onRide: () => void = () => {}): (event: InspectionEvent) => void {
  let riding = false;
  return (event) => {
    if (event.type !== '@xstate.snapshot') return;
    const snapshot = event.snapshot as unknown as GroupSnapshotView;
    if (snapshot.machine?.id !== 'group' || snapshot.value === undefined) return;
    const state = stateText(snapshot.value);
    const now = state.startsWith('running.riding');
    if (now && !riding) {
      log.write('worker_outage', { failure: snapshot.context?.outage?.failure ?? null }, 'warn');
      onRide();
    } else if (!now && riding) {
      log.write('worker_outage_left', { state, probes: snapshot.context?.probes ?? 0 }, 'warn');
    }
    riding = now;
  };
}
