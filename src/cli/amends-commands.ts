import type { Command } from './command.js';

/** The worker, relay, view and dashboard commands are added here as they land. */
export const amendsCommands: Command[] = [];
