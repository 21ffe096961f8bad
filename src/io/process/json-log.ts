/**
 * Structured logs: one JSON object per line on stderr through pino, with the field names
 * amends has always written (`msg`, the line's fields, `time` as an ISO timestamp;
 * docs/design.md#logs-and-exit) plus pino's `level` as a word and the fields bound to the
 * process (`role`, `namespace`, its id field). The destination is synchronous: each line is
 * one write, whole even when the process is killed right after it. `--log-level` (debug,
 * info, warn, error) drops the lines below it; `--log-format pretty` writes the same lines
 * for a person (pretty-line.ts).
 */
import { pino } from 'pino';
import { usageError } from '../../kernel/amends-error.js';
import { prettyDestination } from './pretty-line.js';

export type LogFields = Record<string, unknown>;

export const logLevels = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];
/** What a line may be written at: `fatal` is the process's last line, its failure. */
export type LineLevel = LogLevel | 'fatal';

export const logFormats = ['json', 'pretty'] as const;
export type LogFormat = (typeof logFormats)[number];

export interface JsonLog {
  /** One line at `level` (default info): `msg` names what happened, `fields` its details. */
  write(msg: string, fields?: LogFields, level?: LineLevel): void;
  /** Whether lines at `level` are written: a hot path builds a line's fields only then. */
  enabled(level: LogLevel): boolean;
}

/** A process's log: fields learnt after it opened (the namespace, the id) join every later line. */
export interface ProcessLog extends JsonLog {
  readonly format: LogFormat;
  readonly level: LogLevel;
  /** Adds fields to every later line; each key once (pino appends, it never replaces). */
  bind(fields: LogFields): void;
}

/** `--log-level` wins over AMENDS_LOG_LEVEL; info by default. */
export function logLevelFrom(flag: string | undefined, env: NodeJS.ProcessEnv): LogLevel {
  return oneOf('--log-level', logLevels, flag, env.AMENDS_LOG_LEVEL, 'info');
}

/**
 * `--log-format` wins over AMENDS_LOG_FORMAT; by default pretty on a terminal and JSON
 * anywhere else (a pipe, a file, a container's log), so a log shipper only ever reads JSON.
 */
export function logFormatFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  stream: { isTTY?: boolean },
): LogFormat {
  return oneOf('--log-format', logFormats, flag, env.AMENDS_LOG_FORMAT, stream.isTTY === true ? 'pretty' : 'json');
}

function oneOf<T extends string>(
  name: string,
  choices: readonly T[],
  flag: string | undefined,
  variable: string | undefined,
  otherwise: T,
): T {
  const chosen = (flag?.trim() || variable?.trim() || otherwise).toLowerCase();
  if (!(choices as readonly string[]).includes(chosen)) {
    throw usageError(`${name} ${chosen}: expected one of ${choices.join(', ')}`);
  }
  return chosen as T;
}

export function jsonLog(
  stream: NodeJS.WritableStream = process.stderr,
  base: LogFields = {},
  level: LogLevel = 'info',
  format: LogFormat = 'json',
): ProcessLog {
  // stderr itself gets pino's synchronous file-descriptor destination; any other stream
  // (a test's capture, the --tui log file) is written once per line as it is.
  const raw = stream === process.stderr ? pino.destination({ dest: 2, sync: true }) : stream;
  const logger = pino(
    {
      level,
      base: null,
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    format === 'pretty' ? prettyDestination(raw) : raw,
  ).child(base);
  return {
    format,
    level,
    write(msg, fields = {}, lineLevel = 'info') {
      logger[lineLevel](fields, msg);
    },
    enabled: (lineLevel) => logger.isLevelEnabled(lineLevel),
    bind: (fields) => logger.setBindings(fields),
  };
}
