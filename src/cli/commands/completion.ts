/**
 * `amendsctl completion bash|zsh`: prints a completion script for amendsctl and amends
 * (completion-script.ts), to be evaluated by the user's shell.
 */
import { usageError } from '../../kernel/amends-error.js';
import { defineCommand } from '../command.js';
import { type CompletionShell, completionScript, completionShells } from '../completion-script.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';

export const completionCommand = defineCommand({
  name: 'completion',
  summary: 'print shell completion for amendsctl and amends: completion bash|zsh',
  help: `completion bash|zsh

  Prints a script that completes the commands and flags of amendsctl and amends (and
  file names for their values) in bash or zsh.

  Flags
    (none besides the two below)

  Example
    $ eval "$(amendsctl completion bash)"     # in ~/.bashrc
    $ eval "$(amendsctl completion zsh)"      # in ~/.zshrc, after compinit`,
  flags: {},
  async run(cli, io) {
    const [shell, ...more] = cli.input;
    if (shell === undefined) throw usageError(`name a shell: ${completionShells.join(' or ')}`);
    if (!(completionShells as readonly string[]).includes(shell)) {
      throw usageError(`unknown shell ${JSON.stringify(shell)}: ${completionShells.join(' or ')}`);
    }
    refuseArguments(more);
    // Loaded here: the amends command list pulls in the worker's modules.
    const [{ amendsCommands }, { amendsctlCommands }] = await Promise.all([
      import('../amends-commands.js'),
      import('../amendsctl-commands.js'),
    ]);
    const script = completionScript(shell as CompletionShell, [
      { program: 'amendsctl', commands: amendsctlCommands },
      { program: 'amends', commands: amendsCommands, defaultCommand: 'worker' },
    ]);
    io.stdout.write(script);
    return exitCodes.ok;
  },
});
