/**
 * A progress bar on stderr, only when stderr is a terminal (docs/design.md#source-load). Lines that
 * the command prints on stdout meanwhile go through `printLine`, which clears the bar first
 * when both streams are the terminal, so bar and output never share a line.
 */
import cliProgress from 'cli-progress';
import type { CommandIo } from './command.js';

export interface Progress {
  /** Writes one stdout line without tearing the bar. */
  printLine(line: string): void;
  /** Moves the bar to `value` of the total. */
  update(value: number): void;
  /** A total that grew meanwhile (wait: records arrive while the namespace drains). */
  setTotal(total: number): void;
  stop(): void;
}

const framesPerSecond = 10;

/** `eta`: also show the estimated seconds left (cli-progress's estimate from the recent rate). */
export function createProgress(io: CommandIo, total: number, label: string, unit = 'lines', eta = false): Progress {
  if (!io.stderr.isTTY) {
    return { printLine: (line) => io.stdout.write(`${line}\n`), update: () => {}, setTotal: () => {}, stop: () => {} };
  }
  const sharedTerminal = io.stdout.isTTY === true;
  const bar = new cliProgress.SingleBar(
    {
      stream: io.stderr as NodeJS.WritableStream as NodeJS.WriteStream,
      format: `${label} [{bar}] {value}/{total} ${unit} | {duration}s${eta ? ' | ETA {eta}s' : ''}`,
      fps: framesPerSecond,
      hideCursor: false,
      clearOnComplete: true,
      // printLine clears the bar's line; redrawing every frame puts it back within 1/fps s.
      forceRedraw: sharedTerminal,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    printLine(line) {
      if (sharedTerminal) io.stderr.write('\r\x1b[2K');
      io.stdout.write(`${line}\n`);
    },
    update(value) {
      bar.update(value);
    },
    setTotal(total) {
      bar.setTotal(total);
    },
    stop() {
      // cli-progress saves the cursor at start() and restores it in stop() before clearing
      // "its" line; once stdout lines have scrolled past, that saved spot holds one of them
      // (seen with 3.12.0 under `script`). Saving again here makes stop() clear the bar.
      if (sharedTerminal) io.stderr.write('\x1b7');
      bar.stop();
    },
  };
}
