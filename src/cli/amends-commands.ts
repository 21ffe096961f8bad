import type { Command } from './command.js';
import { workerCommand } from './commands/worker.js';

/** The relay, view and dashboard commands are added here as they land. */
export const amendsCommands: Command[] = [workerCommand as Command];
