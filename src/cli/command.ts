/**
 * One subcommand of `amends` or `amendsctl`: its help, its flags (meow), and what it runs.
 * `run` returns the exit code; errors thrown as AmendsError are mapped in exit.ts.
 */
import type { AnyFlags, Result } from 'meow';
import type { ProcessRole } from '../io/process/heartbeat-writer.js';
import type { ClosedStdout } from './closed-pipe.js';

export interface CommandIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export interface Command<F extends AnyFlags = AnyFlags> {
  name: string;
  /** One line for the executable's command list. */
  summary: string;
  /** Full help: usage line, what it does, flags, an example. */
  help: string;
  flags: F;
  /**
   * Whether its settings may also come from AMENDS_* variables and the settings file
   * (`--settings`, settings-sources.ts): worker, relay and view.
   */
  takesSettings?: boolean;
  /** When stdout closes under it (closed-pipe.ts); default `exit`. */
  closedStdout?: ClosedStdout;
  /**
   * A long-running process's role: its usage errors before it starts are its one fatal log
   * line when its log is JSON (process-log.ts), not the help text.
   */
  logRole?: ProcessRole;
  run(cli: Result<F>, io: CommandIo): Promise<number>;
}

export function defineCommand<F extends AnyFlags>(command: Command<F>): Command<F> {
  return command;
}
