/**
 * Runs an executable made of subcommands (docs/design.md#commands): `help [command]`, `-h`/`--help` and
 * `--version` everywhere; picks the command, parses its flags with meow (an unknown flag
 * is a usage error with the command's help, a missing required flag one line; a
 * long-running process's JSON log line instead: process-log.ts), runs it,
 * and turns any failure into a one-line diagnostic and an exit code (then the error's next
 * step, when it names one, on a line of its own).
 */
import meow from 'meow';
import { errorMessage } from '../kernel/error-message.js';
import { watchClosedPipes } from './closed-pipe.js';
import type { Command, CommandIo } from './command.js';
import { diagnosticFor, exitCodeFor, exitCodes, nextStepLine } from './exit.js';
import { asksFor, joinDashValues, missingFlags, missingFlagsMessage, unknownFlags } from './flag-check.js';
import { commandHelp, type Executable, listing } from './help-text.js';
import { type LogFlags, usageLogLine } from './process-log.js';
import { resolveSettings, withoutDefaults } from './settings-sources.js';
import { packageVersion } from './version.js';

export type { Executable } from './help-text.js';

export async function runExecutable(exe: Executable, argv: string[], io: CommandIo): Promise<number> {
  const setClosedStdout = watchClosedPipes(io.stdout, io.stderr, exe.program);
  const first = argv[0];
  if (first === undefined) {
    io.stderr.write(`\n${listing(exe)}\n\n`);
    return exitCodes.usage;
  }
  if (first === '--help' || first === '-h') return printed(io, `\n${listing(exe)}\n\n`);
  if (first === '--version') return printed(io, `${packageVersion()}\n`);
  if (first === 'help') return help(exe, argv.slice(1), io);
  const named = !first.startsWith('-') || !exe.defaultCommand;
  const name = named ? first : (exe.defaultCommand as string);
  const rest = named ? argv.slice(1) : argv;
  const command = exe.commands.find((c) => c.name === name);
  if (!command) {
    io.stderr.write(`${exe.program}: unknown command ${JSON.stringify(name)} (see ${exe.program} --help)\n`);
    return exitCodes.usage;
  }
  const asked = asksFor(rest);
  if (asked === 'help') return printed(io, commandHelp(exe, command));
  if (asked === 'version') return printed(io, `${packageVersion()}\n`);
  setClosedStdout(command.closedStdout ?? 'exit', `${exe.program} ${command.name}`);
  return runCommand(exe, command, rest, io);
}

/** `help` lists the commands; `help C` prints C's page. */
function help(exe: Executable, args: string[], io: CommandIo): number {
  const [name, ...more] = args;
  if (name === undefined) return printed(io, `\n${listing(exe)}\n\n`);
  const command = exe.commands.find((c) => c.name === name);
  if (!command || more.length > 0) {
    const what = command ? `unexpected argument ${JSON.stringify(more[0])}` : `unknown command ${JSON.stringify(name)}`;
    io.stderr.write(`${exe.program} help: ${what} (see ${exe.program} --help)\n`);
    return exitCodes.usage;
  }
  return printed(io, commandHelp(exe, command));
}

function printed(io: CommandIo, text: string): number {
  io.stdout.write(text);
  return exitCodes.ok;
}

async function runCommand(exe: Executable, command: Command, args: string[], io: CommandIo): Promise<number> {
  const rest = joinDashValues(args);
  const prefix = `${exe.program} ${command.name}`;
  const seeHelp = ` (see ${prefix} --help)`;
  // Required flags are checked below rather than by meow, so a missing one is one line; the
  // defaults of a command with a settings file come after the environment and the file.
  const specs = command.takesSettings ? withoutDefaults(command.flags) : command.flags;
  const flags = Object.fromEntries(
    Object.entries(specs).map(([name, f]) => [name, { ...f, isRequired: false }]),
  ) as typeof command.flags;
  let cli: ReturnType<typeof meow>;
  try {
    cli = meow(commandHelp(exe, command), {
      importMeta: import.meta,
      argv: rest,
      flags,
      // Unknown flags are reported below, with the command's help (meow alone prints no help).
      allowUnknownFlags: true,
      autoHelp: false,
      autoVersion: false,
      description: command.summary,
    });
  } catch (error) {
    // meow throws on a `choices` violation instead of exiting; it is a usage error.
    io.stderr.write(`${prefix}: ${errorMessage(error)}${seeHelp}\n`);
    return exitCodes.usage;
  }
  const unknown = unknownFlags(command.flags, cli.unnormalizedFlags, rest);
  const asLogLine = (message: string) =>
    command.logRole !== undefined && usageLogLine(command.logRole, cli.flags as LogFlags, io, message);
  if (unknown.length > 0) {
    const message = `unknown flag ${unknown.join(', ')}`;
    if (asLogLine(message)) return exitCodes.usage;
    io.stderr.write(`${prefix}: ${message}\n${commandHelp(exe, command)}\n`);
    return exitCodes.usage;
  }
  let runIo = io;
  if (command.takesSettings) {
    try {
      const settings = resolveSettings(command.flags, cli.flags, io.env);
      Object.assign(cli.flags, settings.flags);
      runIo = { ...io, env: settings.env };
    } catch (error) {
      io.stderr.write(`${diagnosticFor(prefix, error)}${seeHelp}\n`);
      return exitCodeFor(error);
    }
  }
  const missing = missingFlags(command.flags, cli.flags as Record<string, unknown>);
  if (missing.length > 0) {
    if (asLogLine(missingFlagsMessage(missing))) return exitCodes.usage;
    io.stderr.write(`${prefix}: ${missingFlagsMessage(missing)}${seeHelp}\n`);
    return exitCodes.usage;
  }
  try {
    return await command.run(cli as never, runIo);
  } catch (error) {
    const hint = exitCodeFor(error) === exitCodes.usage ? seeHelp : '';
    io.stderr.write(`${diagnosticFor(prefix, error)}${hint}\n`);
    const nextStep = nextStepLine(prefix, error);
    if (nextStep !== undefined) io.stderr.write(`${nextStep}\n`);
    if (io.env.AMENDS_DEBUG && error instanceof Error) io.stderr.write(`${error.stack}\n`);
    return exitCodeFor(error);
  }
}
