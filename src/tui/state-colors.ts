/** Colours of lifecycle states and outcomes, in one place. */

export function stateColor(state: string): string | undefined {
  if (state.startsWith('(stale)')) return 'gray';
  if (state.startsWith('failed') || state === 'failed') return 'red';
  if (state.startsWith('retired') || state === 'stopped') return 'gray';
  if (state.includes('recovering') || state.includes('waiting')) return 'yellow';
  if (state.startsWith('processing')) return 'green';
  if (state.startsWith('claiming') || state.startsWith('seeking')) return 'cyan';
  if (state === 'unassigned') return 'gray';
  return undefined;
}

export function outcomeColor(outcome: string): string | undefined {
  if (outcome === 'APPLIED') return 'green';
  if (outcome === 'DUPLICATE' || outcome === 'STALE') return 'yellow';
  return 'red';
}
