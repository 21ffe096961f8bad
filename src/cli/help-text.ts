/**
 * The help an executable prints: its command list with the environment and exit codes
 * (docs/design.md#commands), and one command's page. Both executables share the environment and exit-code
 * sections: they read the same variables and exit the same way.
 */

import { defaultBrokers } from '../io/kafka/kafka-connection.js';
import type { Command } from './command.js';

export interface Executable {
  program: string;
  /** What the executable is, before the command list. */
  description: string;
  commands: Command[];
  /** Used when the first argument is a flag, not a command (`amends --manifest M`). */
  defaultCommand?: string;
}

/** The built-in commands every executable has besides its own (dispatch.ts). */
export const builtInCommands = [{ name: 'help', summary: "print this list, or a command's help: help [command]" }];

const environment = `  Environment
    AMENDS_DATABASE_URL    PostgreSQL URL of the namespaces' database (commands that need it say so)
    AMENDS_BROKERS         Kafka bootstrap servers (--brokers overrides; default ${defaultBrokers})
    AMENDS_KAFKA_CONFIG    librdkafka properties file for every Kafka client (--kafka-config overrides)
    AMENDS_METRICS_ADDR    HOST:PORT of /metrics, /healthz, /readyz of worker, relay, view (--metrics-addr overrides)
    AMENDS_LOG_LEVEL       debug, info, warn or error for the log lines of worker, relay, view (--log-level overrides; default info)
    AMENDS_LOG_FORMAT      json or pretty log lines (--log-format overrides; default pretty on a terminal, else json)
    AMENDS_DEBUG           set to print a stack trace after an unexpected failure's one line`;

const exitCodeList = `  Exit codes
    0    success (verify: PASS)
    1    operational failure: one line on stderr (worker, relay, view: the last log line) says what failed and what to do
    2    usage error (a bad, unknown or missing flag)
    3    verify FAIL
    4    verify INCOMPLETE
    130  interrupted by SIGINT (143: SIGTERM); source-load says which lines it published
    141  stdout was closed by its reader (as a tool killed by SIGPIPE)`;

export function listing(exe: Executable): string {
  const rows = [...exe.commands, ...builtInCommands];
  const width = Math.max(...rows.map((c) => c.name.length));
  const commands = rows.map((c) => `    ${c.name.padEnd(width)}  ${c.summary}`).join('\n');
  return [
    exe.description,
    `  Usage\n    $ ${exe.program} <command> [flags]`,
    `  Commands\n${commands}`,
    environment,
    exitCodeList,
    `  Run \`${exe.program} help <command>\` (or \`${exe.program} <command> --help\`) for a command's flags and an example;\n  \`${exe.program} --version\` prints the version.`,
  ].join('\n\n');
}

/**
 * Rows of a page's Flags section, each description `column` characters after the indent; a
 * flag too long for the column gets a line of its own, its description on the next.
 */
export function flagRows(column: number, rows: readonly (readonly [flag: string, what: string])[]): string {
  const row = ([flag, what]: readonly [string, string]) =>
    flag.length < column ? `    ${flag.padEnd(column)}${what}` : `    ${flag}\n    ${' '.repeat(column)}${what}`;
  return rows.map(row).join('\n');
}

/** -h/--help and --version, aligned with the page's own flag descriptions. */
function everyCommandFlags(text: string): string {
  const column = /^ {4}(--\S+(?: \S+)? +)\S/m.exec(text.slice(text.indexOf('  Flags')))?.[1]?.length ?? 22;
  const row = (flag: string, what: string) => `    ${flag.padEnd(Math.max(column, flag.length + 1))}${what}`;
  return `${row('-h, --help', 'this help')}\n${row('--version', 'the version of amends')}`;
}

/** A command's page: its usage line and text, -h/--help and --version last among its flags. */
export function commandHelp(exe: Executable, command: Command): string {
  const text = command.help.trim();
  const example = text.indexOf('\n\n  Example');
  const page =
    example === -1
      ? `${text}\n\n  Flags\n${everyCommandFlags(text)}`
      : `${text.slice(0, example)}\n${everyCommandFlags(text)}${text.slice(example)}`;
  return `\n  Usage\n    $ ${exe.program} ${page}\n`;
}
