/**
 * A reader that stops reading (`amendsctl export … | head -1`) closes our stdout; Node then
 * reports EPIPE as an 'error' event, which without a listener is a stack trace. Unix tools
 * die of SIGPIPE there, silently. Node ignores SIGPIPE and cannot restore its default, so a
 * command ends the same way by hand: no output, exit status 141 (128 + SIGPIPE, what a
 * shell shows for a tool killed by SIGPIPE; `set -o pipefail` sees it).
 *
 * source-load is the exception: its stdout is a report of work that is the point, so a
 * closed stdout drops the report and the load goes on to its own verdict.
 */

/** What a command does when its stdout closes: end at once, or keep working without it. */
export type ClosedStdout = 'exit' | 'continue';

export const closedPipeExitCode = 128 + 13;

type Stream = NodeJS.WritableStream & { isTTY?: boolean };

function isClosedPipe(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}

/**
 * Listens for a closed stdout and stderr from the first byte written (help included); the
 * returned function sets the policy once the command is known. Another error on stdout is a
 * real failure and is rethrown (an uncaught exception names it). stderr failures are
 * dropped: there is nowhere left to report them.
 */
export function watchClosedPipes(stdout: Stream, stderr: Stream): (policy: ClosedStdout) => void {
  let onStdout: ClosedStdout = 'exit';
  stdout.on('error', (error: unknown) => {
    if (!isClosedPipe(error)) throw error;
    if (onStdout === 'exit') process.exit(closedPipeExitCode);
  });
  stderr.on('error', () => {});
  return (policy) => {
    onStdout = policy;
  };
}
