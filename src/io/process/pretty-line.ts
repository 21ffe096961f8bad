/**
 * `--log-format pretty` (the default on a terminal): the JSON lines of json-log.ts, written
 * for a person. A line reads `12:04:05.123 INFO  worker demo-1 worker_started batch_size=500
 * …` (the time in UTC); the process's last line, its failure (level fatal), reads as every
 * amends command's diagnostic does: `amends worker: <what failed>`, then its next step.
 *
 * Hand-written rather than pino-pretty: this is the one format amends prints for people,
 * it must render that failure line exactly as the other commands do, and it is a few lines
 * against pino-pretty's own dependency tree. `… | npx pino-pretty` works on the JSON too.
 */
/** Bound to every line (json-log.ts); shown once, in front, not as `key=value`. */
const boundKeys = new Set(['level', 'time', 'msg', 'role', 'namespace', 'worker', 'relay', 'view']);

/** What pino writes to: each JSON line it hands over goes on to `target` in its human form. */
export function prettyDestination(target: { write(text: string): unknown }): { write(line: string): void } {
  return {
    write(line: string) {
      target.write(`${prettyLine(JSON.parse(line) as Record<string, unknown>)}\n`);
    },
  };
}

export function prettyLine(line: Record<string, unknown>): string {
  const role = typeof line.role === 'string' ? line.role : '';
  if (line.level === 'fatal') return failureLines(role, line);
  const time = typeof line.time === 'string' ? line.time.slice(11, 23) : '';
  const level = String(line.level ?? '').toUpperCase();
  const who = [role, line.namespace].filter((v) => typeof v === 'string' && v !== '').join(' ');
  const fields = Object.entries(line)
    .filter(([key]) => !boundKeys.has(key))
    .map(([key, value]) => `${key}=${valueText(value)}`);
  return [time, level.padEnd(5), who, String(line.msg ?? ''), ...fields].filter((s) => s !== '').join(' ');
}

/** The diagnostic as dispatch.ts prints it for every other command (exit.ts), then the next step. */
function failureLines(role: string, line: Record<string, unknown>): string {
  const program = role === '' ? 'amends' : `amends ${role}`;
  const hint = line.exit_code === 2 ? ` (see ${program} --help)` : '';
  const lines = [`${program}: ${String(line.error ?? line.msg)}${hint}`];
  if (typeof line.next_step === 'string') lines.push(`${program}: next step: ${line.next_step}`);
  if (typeof line.stack === 'string') lines.push(line.stack);
  return lines.join('\n');
}

function valueText(value: unknown): string {
  if (typeof value === 'string' && /^[^\s"=]+$/.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}
