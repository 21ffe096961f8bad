/** An xstate state value as text: "processing" or "processing.committing" (docs/design.md#inspection heartbeats). */
export function stateText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.map(([k, v]) => `${k}.${stateText(v)}`).join(',');
  }
  return String(value);
}
