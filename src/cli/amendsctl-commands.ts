/** Every amendsctl command, loaded: for help, completion and names that are not a command. */
import { amendsctlCommandLoader, amendsctlCommandNames } from './amendsctl-command-loaders.js';
import type { Command } from './command.js';

export const amendsctlCommands: Command[] = await Promise.all(
  amendsctlCommandNames.map((name) => (amendsctlCommandLoader(name) as () => Promise<Command>)()),
);
