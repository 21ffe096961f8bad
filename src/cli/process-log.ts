/**
 * The log of a long-running process (worker, relay, view) from its first line to its last
 * (docs/operations.md#logs): every line it writes on stderr is a log line in one format,
 * JSON or pretty (json-log.ts), with `role` on each and the namespace and the process's id
 * from the moment the manifest is read. Its failure is not the plain diagnostic other
 * commands print (dispatch.ts) but its last log line, level fatal:
 * `{"level":"fatal",…,"msg":"failed","exit_code":1,"error":"…","next_step":"…"}`, which the
 * pretty format prints as that very diagnostic. Node's own warnings and an uncaught
 * exception become log lines too, so a log shipper never meets a line that is not JSON.
 *
 * Usage errors found before the command runs (an unknown flag, a missing --manifest) are
 * that fatal line too when the log is JSON (dispatch.ts asks `usageLogLine`); a person at a
 * terminal gets the help text instead.
 */
import type { ProcessRole } from '../io/process/heartbeat-writer.js';
import { type JsonLog, jsonLog, logFormatFrom, logLevelFrom, type ProcessLog } from '../io/process/json-log.js';
import { usageError } from '../kernel/amends-error.js';
import type { CommandIo } from './command.js';
import { exitCodeFor, failureLine, nextStepOf } from './exit.js';

export interface LogFlags {
  logLevel?: string;
  logFormat?: string;
}

/**
 * Runs `body` with the process's log; a failure thrown from it (or from reading the log
 * flags) is the log's last line and the returned exit code.
 */
export async function withProcessLog(
  role: ProcessRole,
  flags: LogFlags,
  io: CommandIo,
  body: (log: ProcessLog) => Promise<number>,
): Promise<number> {
  let log: ProcessLog;
  try {
    const level = logLevelFrom(flags.logLevel, io.env);
    log = jsonLog(io.stderr, { role }, level, logFormatFrom(flags.logFormat, io.env, io.stderr));
  } catch (error) {
    // A bad --log-level or --log-format: said in the format a process here writes by default.
    return failed(jsonLog(io.stderr, { role }, 'info', logFormatFrom(undefined, {}, io.stderr)), error, io.env);
  }
  const release = guardProcess(log, io.env);
  try {
    return await body(log);
  } catch (error) {
    return failed(log, error, io.env);
  } finally {
    release();
  }
}

/**
 * A usage error found before `role` started: its fatal log line (true) when the log would be
 * JSON, or false when a person reads it (the caller prints the help).
 */
export function usageLogLine(role: ProcessRole, flags: LogFlags, io: CommandIo, message: string): boolean {
  let json: boolean;
  try {
    json = logFormatFrom(flags.logFormat, io.env, io.stderr) === 'json';
  } catch {
    json = logFormatFrom(undefined, {}, io.stderr) === 'json';
  }
  if (json) failed(jsonLog(io.stderr, { role }), usageError(message), io.env);
  return json;
}

/** Writes the process's last line, its failure (level fatal); returns its exit code. */
export function failed(log: JsonLog, error: unknown, env: NodeJS.ProcessEnv): number {
  const exitCode = exitCodeFor(error);
  const nextStep = nextStepOf(error);
  log.write(
    'failed',
    {
      exit_code: exitCode,
      error: failureLine(error),
      ...(nextStep === undefined ? {} : { next_step: nextStep }),
      ...(env.AMENDS_DEBUG && error instanceof Error ? { stack: error.stack } : {}),
    },
    'fatal',
  );
  return exitCode;
}

/**
 * While the process runs: Node's warnings are log lines (level warn) instead of its own
 * text, and an uncaught exception is the fatal line and exit 1, as Node would exit without
 * one. Returns what undoes both.
 */
function guardProcess(log: JsonLog, env: NodeJS.ProcessEnv): () => void {
  const nodeWarnings = process.listeners('warning');
  const onWarning = (warning: Error) =>
    log.write('node_warning', { name: warning.name, detail: warning.message }, 'warn');
  const onUncaught = (error: unknown) => process.exit(failed(log, error, env));
  process.removeAllListeners('warning');
  process.on('warning', onWarning);
  process.on('uncaughtException', onUncaught);
  return () => {
    process.off('uncaughtException', onUncaught);
    process.off('warning', onWarning);
    for (const listener of nodeWarnings) process.on('warning', listener);
  };
}
