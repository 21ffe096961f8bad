/**
 * The command-line conventions of cli.md, for every subcommand of both executables, run
 * in-process through the real dispatcher: -h/--help and --version everywhere (the version
 * from package.json), `help [command]`, a top-level help with environment and exit codes,
 * one line for a missing required flag, unknown flags as typed, and shell completion.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { amendsCommands } from '../../src/cli/amends-commands.js';
import { amendsctlCommands } from '../../src/cli/amendsctl-commands.js';
import type { Command, CommandIo } from '../../src/cli/command.js';
import { completionScript } from '../../src/cli/completion-script.js';
import { type Executable, runExecutable } from '../../src/cli/dispatch.js';
import { repoRoot } from '../support/amendsctl-process.js';

class Captured extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

const executables: Executable[] = [
  { program: 'amendsctl', description: '  amendsctl', commands: amendsctlCommands },
  { program: 'amends', description: '  amends', commands: amendsCommands, defaultCommand: 'worker' },
];
const version = (JSON.parse(readFileSync(`${repoRoot}/package.json`, 'utf8')) as { version: string }).version;
const every = executables.flatMap((exe) => exe.commands.map((command) => ({ exe, command })));

/** `terminal`: stderr is a terminal (a long-running process's log is then for a person). */
async function run(exe: Executable, argv: string[], terminal = false) {
  const stdout = new Captured();
  const stderr = Object.assign(new Captured(), { isTTY: terminal });
  const io: CommandIo = { stdout, stderr, env: {} };
  const code = await runExecutable(exe, argv, io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

function requiredFlags(command: Command): string[] {
  return Object.entries(command.flags)
    .filter(([, f]) => (f as { isRequired?: boolean }).isRequired === true)
    .map(([name]) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
}

describe.each(every)('$exe.program $command.name', ({ exe, command }) => {
  it('prints its help for -h and --help, listing both, exit 0', async () => {
    for (const flag of ['-h', '--help']) {
      const result = await run(exe, [command.name, flag]);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout.startsWith(`\n  Usage\n    $ ${exe.program} ${command.name}`)).toBe(true);
      expect(result.stdout).toMatch(/\n {4}-h, --help +this help\n {4}--version +the version of amends\n/);
    }
    expect((await run(exe, ['help', command.name])).stdout).toBe((await run(exe, [command.name, '-h'])).stdout);
  });

  it("prints package.json's version for --version", async () => {
    const result = await run(exe, [command.name, '--version']);
    expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('names every missing required flag in one line, exit 2', async () => {
    const required = requiredFlags(command);
    if (required.length === 0) return;
    const result = await run(exe, [command.name], true);
    expect(result.code).toBe(2);
    const names =
      required.length === 1
        ? `${required[0]} is required`
        : `${required.slice(0, -1).join(', ')} and ${required.at(-1)} are required`;
    expect(result.stderr).toBe(
      `${exe.program} ${command.name}: ${names} (see ${exe.program} ${command.name} --help)\n`,
    );
    if (command.logRole !== undefined) expectFatalLogLine(await run(exe, [command.name]), command.logRole, names);
  });

  it('names an unknown flag as it was typed, exit 2', async () => {
    const result = await run(exe, [command.name, '--No-Such_Flag=1'], true);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n', 1)[0]).toBe(`${exe.program} ${command.name}: unknown flag --No-Such_Flag`);
    if (command.logRole !== undefined) {
      const offTerminal = await run(exe, [command.name, '--No-Such_Flag=1']);
      expectFatalLogLine(offTerminal, command.logRole, 'unknown flag --No-Such_Flag');
    }
  });
});

/** Off a terminal, a long-running process's usage error is its log's one line (process-log.ts). */
function expectFatalLogLine(result: { code: number; stderr: string }, role: string, error: string): void {
  expect(result.code).toBe(2);
  const lines = result.stderr.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 'fatal', role, msg: 'failed', exit_code: 2, error });
}

describe.each(executables)('$program', (exe) => {
  it('lists every command, the environment and the exit codes', async () => {
    const result = await run(exe, ['--help']);
    expect(result.code).toBe(0);
    for (const command of exe.commands) expect(result.stdout).toMatch(new RegExp(`\\n {4}${command.name} +\\S`));
    expect(result.stdout).toContain('\n  Environment\n    AMENDS_DATABASE_URL');
    expect(result.stdout).toContain('AMENDS_BROKERS');
    expect(result.stdout).toMatch(
      /\n {2}Exit codes\n {4}0 +success.*\n {4}1 .*\n {4}2 .*\n {4}3 +verify FAIL\n {4}4 +verify INCOMPLETE/,
    );
    expect((await run(exe, ['help'])).stdout).toBe(result.stdout);
    expect(await run(exe, ['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('refuses help of an unknown command in one line, exit 2', async () => {
    const result = await run(exe, ['help', 'no-such-command']);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `${exe.program} help: unknown command "no-such-command" (see ${exe.program} --help)\n`,
    });
  });
});

/** What bash completes for the words typed so far (the last one being completed). */
function bashCompletes(script: string, words: string[]): string[] {
  const program = [
    script,
    `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}`,
    `$(complete -p ${words[0]} | sed -E 's/.* -F ([^ ]+) .*/\\1/')`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash expansion, not a template
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', program], { encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter((l) => l !== '');
}

describe('amendsctl completion', () => {
  const programs = [
    { program: 'amendsctl', commands: amendsctlCommands },
    { program: 'amends', commands: amendsCommands, defaultCommand: 'worker' },
  ];

  it('completes commands and each command’s flags in bash', () => {
    const script = completionScript('bash', programs);
    expect(bashCompletes(script, ['amendsctl', 'so'])).toEqual(['source-create', 'source-adopt', 'source-load']);
    expect(bashCompletes(script, ['amendsctl', 'source-load', '--d'])).toEqual(['--delivery-timeout-ms']);
    expect(bashCompletes(script, ['amendsctl', 'help', 'ver'])).toEqual(['verify']);
    expect(bashCompletes(script, ['amends', 'worker', '--batch'])).toEqual(['--batch-size']);
    // `amends --manifest M` runs the worker: a leading flag completes the worker's flags.
    expect(bashCompletes(script, ['amends', '--inst'])).toEqual(['--instance-id']);
  });

  it('defines one zsh function per executable, with every command', () => {
    const script = completionScript('zsh', programs);
    expect(script.startsWith('#compdef amendsctl amends\n')).toBe(true);
    expect(script).toContain('compdef _amends_complete_amendsctl amendsctl');
    expect(script).toContain('compdef _amends_complete_amends amends');
    for (const command of amendsctlCommands) expect(script).toContain(`    ${command.name}) flags=(`);
  });

  it('is printed by the command for bash and zsh, and refuses another shell', async () => {
    const [exe] = executables as [Executable];
    const bash = await run(exe, ['completion', 'bash']);
    expect(bash.code).toBe(0);
    expect(bash.stdout).toBe(completionScript('bash', programs));
    expect((await run(exe, ['completion', 'zsh'])).stdout).toBe(completionScript('zsh', programs));
    const fish = await run(exe, ['completion', 'fish']);
    expect(fish.code).toBe(2);
    expect(fish.stderr).toBe(
      'amendsctl completion: unknown shell "fish": bash or zsh (see amendsctl completion --help)\n',
    );
  });
});
