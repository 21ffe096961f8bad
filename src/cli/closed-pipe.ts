/**
 * A reader that stops reading (`amendsctl export … | head -1`) closes our stdout; Node then
 * reports EPIPE as an 'error' event, which without a listener is a stack trace. Unix tools
 * die of SIGPIPE there, silently. Node ignores SIGPIPE and cannot restore its default, so a
 * command ends the same way by hand: no output, exit status 141 (128 + SIGPIPE, what a
 * shell shows for a tool killed by SIGPIPE; `set -o pipefail` sees it).
 *
 * Any other failed write (ENOSPC on a full disk, EIO: `amendsctl export … > /dev/full`) is a
 * failure of the command: one line on stderr naming the error, exit 1 (issue 35). Every
 * command's stdout passes here, so none prints Node's stack trace for it.
 *
 * source-load is the exception: its stdout is a report of work that is the point, so a
 * closed or failing stdout drops the report (a failing one said once on stderr) and the load
 * goes on to its own verdict.
 */
import { exitCodes } from './exit.js';

/** What a command does when its stdout closes: end at once, or keep working without it. */
export type ClosedStdout = 'exit' | 'continue';

export const closedPipeExitCode = 128 + 13;

type Stream = NodeJS.WritableStream & { isTTY?: boolean };

function isClosedPipe(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}

/** `writing to stdout failed: ENOSPC (no space left on device)` from Node's error. */
export function writeFailure(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  // Node's system errors read `CODE: description, syscall`.
  const description = /^[A-Z0-9]+: ([^,\n]+)/.exec(text)?.[1] ?? text.split('\n', 1)[0];
  return `writing to stdout failed: ${typeof code === 'string' ? `${code} (${description})` : description}`;
}

/**
 * Listens for a closed or failing stdout, and stderr, from the first byte written (help
 * included); the returned function sets the policy and the diagnostic's prefix once the
 * command is known. stderr failures are dropped: there is nowhere left to report them.
 */
export function watchClosedPipes(
  stdout: Stream,
  stderr: Stream,
  program: string,
): (policy: ClosedStdout, prefix: string) => void {
  let onStdout: ClosedStdout = 'exit';
  let prefix = program;
  let reported = false;
  stdout.on('error', (error: unknown) => {
    if (isClosedPipe(error)) {
      if (onStdout === 'exit') process.exit(closedPipeExitCode);
      return;
    }
    if (!reported) stderr.write(`${prefix}: ${writeFailure(error)}\n`);
    reported = true;
    if (onStdout === 'exit') process.exit(exitCodes.failure);
  });
  stderr.on('error', () => {});
  return (policy, commandPrefix) => {
    onStdout = policy;
    prefix = commandPrefix;
  };
}
