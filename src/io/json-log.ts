/**
 * Structured logs: one JSON object per line on stderr, stable field names, `time` last
 * (worker.md §7). Hand-written rather than pino: a process here logs a few lines per
 * decision at most, and a synchronous single write per line keeps a line whole even when
 * the process is killed right after it.
 */
export type LogFields = Record<string, unknown>;

export interface JsonLog {
  write(msg: string, fields?: LogFields): void;
}

export function jsonLog(stream: NodeJS.WritableStream = process.stderr, base: LogFields = {}): JsonLog {
  return {
    write(msg, fields = {}) {
      stream.write(`${JSON.stringify({ msg, ...base, ...fields, time: new Date().toISOString() })}\n`);
    },
  };
}
