/**
 * amendsctl's commands by name, in the order help lists them, each module loaded only when it
 * is needed: a process that runs one command loads that command's clients alone (issue 31:
 * `amendsctl simulate` starts in 0.15 CPU-seconds instead of 0.64 with every command's
 * modules loaded; the suite spawns amendsctl hundreds of times). Help, unknown names and
 * completion load them all (amendsctl-commands.ts).
 */
import type { Command } from './command.js';

const loaders: Readonly<Record<string, () => Promise<Command>>> = {
  migrate: async () => (await import('./commands/migrate.js')).migrateCommand as Command,
  'source-create': async () => (await import('./commands/source-create.js')).sourceCreateCommand as Command,
  'source-adopt': async () => (await import('./commands/source-adopt.js')).sourceAdoptCommand as Command,
  'source-load': async () => (await import('./commands/source-load.js')).sourceLoadCommand as Command,
  'output-create': async () => (await import('./commands/output-create.js')).outputCreateCommand as Command,
  'rebuild-create': async () => (await import('./commands/rebuild-create.js')).rebuildCreateCommand as Command,
  'config-revise': async () => (await import('./commands/config-revise.js')).configReviseCommand as Command,
  'manifest-recover': async () => (await import('./commands/manifest-recover.js')).manifestRecoverCommand as Command,
  'namespace-drop': async () => (await import('./commands/namespace-drop.js')).namespaceDropCommand as Command,
  simulate: async () => (await import('./commands/simulate.js')).simulateCommand as Command,
  inspect: async () => (await import('./commands/inspect.js')).inspectCommand as Command,
  wait: async () => (await import('./commands/wait.js')).waitCommand as Command,
  export: async () => (await import('./commands/export.js')).exportCommand as Command,
  explain: async () => (await import('./commands/explain.js')).explainCommand as Command,
  balances: async () => (await import('./commands/balances.js')).balancesCommand as Command,
  verify: async () => (await import('./commands/verify.js')).verifyCommand as Command,
  showcase: async () => (await import('./commands/showcase.js')).showcaseCommand as Command,
  chaos: async () => (await import('./commands/chaos.js')).chaosCommand as Command,
  completion: async () => (await import('./commands/completion.js')).completionCommand as Command,
};

/** The names, in help's order. */
export const amendsctlCommandNames: readonly string[] = Object.keys(loaders);

/** The loader of the command `name`, or undefined when no command has that name. */
export function amendsctlCommandLoader(name: string | undefined): (() => Promise<Command>) | undefined {
  return name !== undefined && Object.hasOwn(loaders, name) ? loaders[name] : undefined;
}
