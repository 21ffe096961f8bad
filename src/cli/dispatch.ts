/**
 * Runs an executable made of subcommands: picks the command, parses its flags with
 * meow (unknown flags and bad choices are usage errors, exit 2, with the command's help),
 * runs it, and turns any failure into a one-line diagnostic and an exit code.
 */
import meow from 'meow';
import { watchClosedPipes } from './closed-pipe.js';
import type { Command, CommandIo } from './command.js';
import { diagnosticFor, exitCodeFor, exitCodes } from './exit.js';

export interface Executable {
  program: string;
  /** What the executable is, before the command list. */
  description: string;
  commands: Command[];
  /** Used when the first argument is a flag, not a command (`amends --manifest M`). */
  defaultCommand?: string;
}

function listing(exe: Executable): string {
  const width = Math.max(...exe.commands.map((c) => c.name.length));
  const rows = exe.commands.map((c) => `    ${c.name.padEnd(width)}  ${c.summary}`).join('\n');
  return `${exe.description}\n\n  Usage\n    $ ${exe.program} <command> [flags]\n\n  Commands\n${rows}\n\n  Run \`${exe.program} <command> --help\` for a command's flags and an example.`;
}

export async function runExecutable(exe: Executable, argv: string[], io: CommandIo): Promise<number> {
  const setClosedStdout = watchClosedPipes(io.stdout, io.stderr);
  const first = argv[0];
  if (first === undefined || first === '--help' || first === '-h') {
    io.stdout.write(`\n${listing(exe)}\n\n`);
    return first === undefined ? exitCodes.usage : exitCodes.ok;
  }
  if (first === '--version') {
    io.stdout.write('0.1.0\n');
    return exitCodes.ok;
  }
  let name = first;
  let rest = argv.slice(1);
  if (first.startsWith('-') && exe.defaultCommand) {
    name = exe.defaultCommand;
    rest = argv;
  }
  const command = exe.commands.find((c) => c.name === name);
  if (!command) {
    io.stderr.write(`${exe.program}: unknown command ${JSON.stringify(name)}\n\n${listing(exe)}\n\n`);
    return exitCodes.usage;
  }
  const help = `\n  Usage\n    $ ${exe.program} ${command.help.trim()}\n`;
  // Required flags are checked here rather than by meow, so a missing one is reported like
  // every other usage error: one line, the command's help, exit 2.
  const required = Object.entries(command.flags)
    .filter(([, f]) => (f as { isRequired?: unknown }).isRequired === true)
    .map(([name]) => name);
  const flags = Object.fromEntries(
    Object.entries(command.flags).map(([name, f]) => [name, { ...f, isRequired: false }]),
  ) as typeof command.flags;
  let cli: ReturnType<typeof meow>;
  try {
    cli = meow(help, {
      importMeta: import.meta,
      argv: rest,
      flags,
      // Unknown flags are reported below, with the command's help (meow alone prints no help).
      allowUnknownFlags: true,
      autoHelp: true,
      autoVersion: false,
      description: command.summary,
    });
  } catch (error) {
    // meow throws on a `choices` violation instead of exiting; it is a usage error.
    io.stderr.write(`${exe.program} ${command.name}: ${(error as Error).message}\n`);
    return exitCodes.usage;
  }
  const known = new Set(['help', 'version']);
  for (const [name, f] of Object.entries(command.flags)) {
    known.add(name);
    const spec = f as { shortFlag?: string; aliases?: string[] };
    if (spec.shortFlag) known.add(spec.shortFlag);
    for (const a of spec.aliases ?? []) known.add(a);
  }
  const unknown = Object.keys(cli.unnormalizedFlags).filter((k) => !known.has(k) && !known.has(camelCase(k)));
  if (unknown.length > 0) {
    const names = unknown.map((k) => (k.length === 1 ? `-${k}` : `--${k}`)).join(', ');
    io.stderr.write(`${exe.program} ${command.name}: unknown flag ${names}\n${help}\n`);
    return exitCodes.usage;
  }
  const missing = required.filter((name) => {
    const v = (cli.flags as Record<string, unknown>)[name];
    return v === undefined || v === '';
  });
  if (missing.length > 0) {
    const names = missing.map((n) => `--${n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ');
    io.stderr.write(`${exe.program} ${command.name}: missing required flag ${names}\n${help}\n`);
    return exitCodes.usage;
  }
  setClosedStdout(command.closedStdout ?? 'exit');
  try {
    return await command.run(cli as never, io);
  } catch (error) {
    // A bad flag value is one line like every diagnostic, pointing at the help; unknown and
    // missing flags (above) print the help itself, as cli.md asks.
    const hint = exitCodeFor(error) === exitCodes.usage ? ` (see ${exe.program} ${command.name} --help)` : '';
    io.stderr.write(`${diagnosticFor(`${exe.program} ${command.name}`, error)}${hint}\n`);
    if (io.env.AMENDS_DEBUG && error instanceof Error) io.stderr.write(`${error.stack}\n`);
    return exitCodeFor(error);
  }
}

function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
