/**
 * SIGINT and SIGTERM during `amendsctl source-load` (issue 35: Ctrl-C exited 130 saying
 * nothing, with 1,797 of 20,000 lines published). Before anything is queued the load simply
 * ends, saying nothing was published. While it publishes, the first signal stops the
 * queuing; the lines in flight settle (each bounded by the delivery timeout), the producer
 * flushes and closes, and the load reports the last line known published and how to go on
 * (source-load-outcomes.ts). A second signal stops waiting for the flush and reports what is
 * known at that moment. The exit code stays the shell's for a death by that signal: 130 for
 * SIGINT, 143 for SIGTERM.
 */

import type { CommandIo } from './command.js';

const signalExitCodes: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143 };

export function exitCodeForSignal(signal: NodeJS.Signals): number {
  return signalExitCodes[signal] ?? 1;
}

/** The publishing phase's side: stop queuing; the report of what is known now. */
export interface Publishing {
  stop(reason: string): void;
  reportUnflushed(signal: NodeJS.Signals): string;
}

export class LoadInterruption {
  /** The first signal received, if any. */
  signal: NodeJS.Signals | undefined;
  private publishing: Publishing | undefined;

  constructor(
    private readonly io: CommandIo,
    private readonly program: string,
    private readonly exit: (code: number) => never = (code) => process.exit(code),
  ) {
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  /** From the first queued line on, a signal stops the queuing instead of ending the process. */
  startPublishing(publishing: Publishing): void {
    this.publishing = publishing;
  }

  dispose(): void {
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }

  private readonly onSignal = (signal: NodeJS.Signals): void => {
    const first = this.signal === undefined;
    this.signal ??= signal;
    if (this.publishing === undefined) {
      this.io.stderr.write(
        `${this.program}: interrupted by ${signal} before publishing: nothing was published; rerunning is safe\n`,
      );
      this.exit(exitCodeForSignal(signal));
    }
    if (first) {
      this.publishing.stop(`interrupted by ${signal}`);
      return;
    }
    this.io.stderr.write(`${this.program}: ${this.publishing.reportUnflushed(signal)}\n`);
    this.exit(exitCodeForSignal(this.signal));
  };
}
