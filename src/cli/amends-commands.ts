import type { Command } from './command.js';
import { relayCommand } from './commands/relay.js';
import { tuiCommand } from './commands/tui.js';
import { viewCommand } from './commands/view.js';
import { workerCommand } from './commands/worker.js';

export const amendsCommands: Command[] = [
  workerCommand as Command,
  relayCommand as Command,
  viewCommand as Command,
  tuiCommand as Command,
];
