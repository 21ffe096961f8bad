/**
 * Shell completion for both executables (`amendsctl completion bash|zsh`), generated from
 * the command definitions so it never lists a command or flag that does not exist. It
 * completes command names, each command's flags, and file names elsewhere.
 */
import type { Command } from './command.js';
import { flagName } from './flag-check.js';

export interface CompletedProgram {
  program: string;
  commands: readonly Pick<Command, 'name' | 'flags'>[];
  /** Whose flags a first word that is a flag takes (`amends --manifest M` runs the worker). */
  defaultCommand?: string;
}

export const completionShells = ['bash', 'zsh'] as const;
export type CompletionShell = (typeof completionShells)[number];

const everyCommandFlags = ['--help', '--version'];

function flagsOf(command: Pick<Command, 'flags'>): string[] {
  const own = Object.keys(command.flags).map(flagName);
  return [...own, ...everyCommandFlags];
}

function names(program: CompletedProgram): string[] {
  return [...program.commands.map((c) => c.name), 'help'];
}

/** A shell identifier for the program's function (`amendsctl` → `_amends_complete_amendsctl`). */
function functionName(program: string): string {
  return `_amends_complete_${program.replace(/[^A-Za-z0-9]/g, '_')}`;
}

/** The `case` arms: each command's flags, and the default command's for a leading flag. */
function flagCases(program: CompletedProgram, arm: (pattern: string, flags: string) => string): string {
  const arms = program.commands.map((c) => arm(c.name, flagsOf(c).join(' ')));
  const fallback = program.commands.find((c) => c.name === program.defaultCommand);
  if (fallback) arms.push(arm('-*', flagsOf(fallback).join(' ')));
  return arms.join('\n');
}

function bashFunction(program: CompletedProgram): string {
  const cases = flagCases(program, (pattern, flags) => `    ${pattern}) flags="${flags}" ;;`);
  return `${functionName(program.program)}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" flags=""
  if [[ $COMP_CWORD -eq 1 && $cur != -* ]]; then
    COMPREPLY=($(compgen -W "${names(program).join(' ')}" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
    help) COMPREPLY=($(compgen -W "${program.commands.map((c) => c.name).join(' ')}" -- "$cur")); return ;;
  esac
  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$flags" -- "$cur")); fi
}
complete -o default -o bashdefault -F ${functionName(program.program)} ${program.program}`;
}

function zshFunction(program: CompletedProgram): string {
  const cases = flagCases(program, (pattern, flags) => `    ${pattern}) flags=(${flags}) ;;`);
  return `${functionName(program.program)}() {
  local -a flags
  if (( CURRENT == 2 )) && [[ $PREFIX != -* ]]; then
    compadd -- ${names(program).join(' ')}
    return
  fi
  case "\${words[2]}" in
${cases}
    help) compadd -- ${program.commands.map((c) => c.name).join(' ')}; return ;;
  esac
  if [[ $PREFIX == -* ]]; then compadd -- $flags; else _files; fi
}
compdef ${functionName(program.program)} ${program.program}`;
}

export function completionScript(shell: CompletionShell, programs: readonly CompletedProgram[]): string {
  const header =
    shell === 'bash'
      ? '# amends completion for bash: eval "$(amendsctl completion bash)" (e.g. in ~/.bashrc)'
      : '#compdef amendsctl amends\n# amends completion for zsh: eval "$(amendsctl completion zsh)" after compinit (e.g. in ~/.zshrc)';
  const body = programs.map((p) => (shell === 'bash' ? bashFunction(p) : zshFunction(p)));
  return `${[header, ...body].join('\n\n')}\n`;
}
