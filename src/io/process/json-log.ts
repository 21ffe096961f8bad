/**
 * Structured logs: one JSON object per line on stderr through pino, with the field names
 * amends has always written (`msg`, the process's own id field, the line's fields, `time`
 * as an ISO timestamp; docs/design.md#logs-and-exit) plus pino's `level` as a word. The destination is
 * synchronous: each line is one write, whole even when the process is killed right after
 * it. `--log-level` (debug, info, warn, error) drops the lines below it.
 */
import { pino } from 'pino';
import { usageError } from '../../kernel/amends-error.js';

export type LogFields = Record<string, unknown>;

export const logLevels = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];

export interface JsonLog {
  /** One line at `level` (default info): `msg` names what happened, `fields` its details. */
  write(msg: string, fields?: LogFields, level?: LogLevel): void;
}

/** `--log-level` wins over AMENDS_LOG_LEVEL; info by default. */
export function logLevelFrom(flag: string | undefined, env: NodeJS.ProcessEnv): LogLevel {
  const chosen = (flag?.trim() || env.AMENDS_LOG_LEVEL?.trim() || 'info').toLowerCase();
  if (!(logLevels as readonly string[]).includes(chosen)) {
    throw usageError(`--log-level ${chosen}: expected one of ${logLevels.join(', ')}`);
  }
  return chosen as LogLevel;
}

export function jsonLog(
  stream: NodeJS.WritableStream = process.stderr,
  base: LogFields = {},
  level: LogLevel = 'info',
): JsonLog {
  // stderr itself gets pino's synchronous file-descriptor destination; any other stream
  // (a test's capture, the --tui log file) is written once per line as it is.
  const destination = stream === process.stderr ? pino.destination({ dest: 2, sync: true }) : stream;
  const logger = pino(
    {
      level,
      base: null,
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  ).child(base);
  return {
    write(msg, fields = {}, lineLevel = 'info') {
      logger[lineLevel](fields, msg);
    },
  };
}
